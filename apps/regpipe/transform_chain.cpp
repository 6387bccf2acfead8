#include "transform_chain.hpp"

#include <regpipe/host/displacement_field_io.hpp>
#include <regpipe/host/error.hpp>

namespace fs = std::filesystem;

namespace regpipe::cli {
namespace {

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) || a.lexically_normal() == b.lexically_normal();
}

}  // namespace

void ChainImages::name(size_t space, const fs::path& path, const std::string& named_by) {
  std::optional<NamedImage>& slot = spaces_[space];
  if (!slot) {
    slot = NamedImage{path, named_by};
  } else if (!same_file(slot->path, path)) {
    throw UserError("two images for one space of the chain: '" + slot->path.string() + "' (" +
                    slot->named_by + ") and '" + path.string() + "' (" + named_by + ")");
  }
}

void ChainImages::name_from(const std::vector<TransformArgument>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = "'" + inputs[i].path.string() + "'";
    if (inputs[i].src) name(i, *inputs[i].src, "src= of " + file);
    if (inputs[i].ref) name(i + 1, *inputs[i].ref, "ref= of " + file);
  }
}

void ChainImages::name_default(size_t space, const fs::path& path, const std::string& named_by) {
  if (!spaces_[space]) spaces_[space] = NamedImage{path, named_by};
}

void ChainImages::provide(const fs::path& path, const Image& image) {
  Image grid;  // only the grid: FSL's coordinates need nothing else
  grid.dims = image.dims;
  grid.voxel_to_world = image.voxel_to_world;
  images_.insert_or_assign(path, std::move(grid));
}

FslImages ChainImages::fsl_images(size_t from, size_t to, const fs::path& file,
                                  const std::string& how) {
  if (!spaces_[from] || !spaces_[to])
    throw UserError("transform '" + file.string() + "' is FSL's: its matrix is in the voxel "
                    "coordinates of the two images it relates, and " + how);
  return {&image(spaces_[from]->path), &image(spaces_[to]->path)};
}

const Image& ChainImages::image(const fs::path& path) {
  auto found = images_.find(path);
  // Volume 0 of a 4D image: its grid is every volume's.
  if (found == images_.end()) found = images_.emplace(path, read_image(path, {0u})).first;
  return found->second;
}

bool names_displacement_field(const TransformArgument& input) {
  return input.warp || (!input.format && is_nifti_file(input.path));
}

std::vector<ChainStep> read_chain(const std::vector<TransformArgument>& inputs,
                                  const std::optional<TransformFormat>& in_format, ChainImages& images,
                                  const std::string& how) {
  // Input i maps reference world i+1 to moving world i (a field: x -> x + u(x) on space i+1).
  std::vector<ChainStep> steps(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TransformArgument& input = inputs[i];
    if (names_displacement_field(input)) {
      steps[i].field = std::make_shared<const regpipe_common::DisplacementField>(
          read_displacement_field(input.path));
      continue;
    }
    const std::optional<TransformFormat> named = input.format ? input.format : in_format;
    const TransformFormat format = named ? *named : detect_transform_format(input.path);
    const FslImages fsl = format == TransformFormat::Fsl
                              ? images.fsl_images(i, i + 1, input.path, how)
                              : FslImages{};
    steps[i].ref_to_mov = read_transform(input.path, format, fsl);
  }
  return steps;
}

Eigen::Matrix4d compose_chain(const std::vector<TransformArgument>& inputs,
                              const std::optional<TransformFormat>& in_format, ChainImages& images,
                              const std::string& how) {
  for (const TransformArgument& input : inputs)
    if (names_displacement_field(input))
      throw UserError("transform '" + input.path.string() +
                      "' is a displacement field (a NIfTI vector image); regpipe transform converts "
                      "and chains affine transforms only. regpipe apply takes fields in its -t chain");
  // The product in the given order: reference world n -> moving world 0.
  Eigen::Matrix4d ref_to_mov = Eigen::Matrix4d::Identity();
  for (const ChainStep& step : read_chain(inputs, in_format, images, how))
    ref_to_mov = ref_to_mov * step.ref_to_mov;
  return ref_to_mov;
}

std::optional<TransformFormat> format_option(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_transform_format(name);
}

std::string chain_name(const std::vector<TransformArgument>& inputs) {
  std::string names;
  for (const auto& input : inputs) names += (names.empty() ? "'" : ", '") + input.path.string() + "'";
  return "the transform of " + names;
}

}  // namespace regpipe::cli
