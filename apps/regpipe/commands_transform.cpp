// regpipe transform INPUT... -o OUTPUT: convert, concatenate and invert affine transform files
// (FSL .mat, ITK .tfm/.txt/.h5, ANTs' binary .mat, RAS world 4x4).
//
// The inputs are a chain in the order an image goes through them: INPUT 1 registers space 0
// onto space 1, INPUT 2 space 1 onto space 2, ...; the output registers space 0 onto space n
// (docs/coordinates.md). --src and --ref are the images of space 0 and space n; the spaces in
// between get theirs from an input's own :src= / :ref=.
#include "commands.hpp"
#include "transform_argument.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>

namespace fs = std::filesystem;

namespace regpipe::cli {
namespace {

struct TransformOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool invert = false;
  std::string src, ref, in_format, out_format;
};

// The image of each space of the chain (0 .. n), from --src, --ref and the inputs' own
// src=/ref=; two different images for one space are refused.
class ChainImages {
 public:
  ChainImages(const TransformOptions& o, const std::vector<TransformArgument>& inputs)
      : spaces_(inputs.size() + 1) {
    if (!o.src.empty()) name(0, o.src, "--src");
    if (!o.ref.empty()) name(inputs.size(), o.ref, "--ref");
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string file = "'" + inputs[i].path.string() + "'";
      if (inputs[i].src) name(i, *inputs[i].src, "src= of " + file);
      if (inputs[i].ref) name(i + 1, *inputs[i].ref, "ref= of " + file);
    }
  }

  // FLIRT's -in (the image of space `from`) and -ref (space `to`) for FSL file `file`; `how`
  // tells the user how to name them when one is missing.
  FslImages fsl_images(size_t from, size_t to, const fs::path& file, const std::string& how) {
    if (!spaces_[from] || !spaces_[to])
      throw UserError("transform '" + file.string() + "' is FSL's: its matrix is in the voxel "
                      "coordinates of the two images it relates, and " + how);
    return {&image(spaces_[from]->path), &image(spaces_[to]->path)};
  }

 private:
  struct NamedImage {
    fs::path path;
    std::string named_by;  // "--src", "ref= of 'a.mat'"
  };

  void name(size_t space, const fs::path& path, const std::string& named_by) {
    std::optional<NamedImage>& slot = spaces_[space];
    if (!slot) {
      slot = NamedImage{path, named_by};
    } else if (!same_file(slot->path, path)) {
      throw UserError("two images for one space of the chain: '" + slot->path.string() + "' (" +
                      slot->named_by + ") and '" + path.string() + "' (" + named_by + ")");
    }
  }

  static bool same_file(const fs::path& a, const fs::path& b) {
    std::error_code ec;
    return fs::equivalent(a, b, ec) || a.lexically_normal() == b.lexically_normal();
  }

  const Image& image(const fs::path& path) {
    auto found = images_.find(path);
    if (found == images_.end()) found = images_.emplace(path, read_image(path)).first;
    return found->second;
  }

  std::vector<std::optional<NamedImage>> spaces_;
  std::map<fs::path, Image> images_;  // read once, when an FSL file needs it
};

std::optional<TransformFormat> format_option(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_transform_format(name);
}

// "the transform of 'a.mat', 'b.tfm'", for messages about the chain's result.
std::string chain_name(const std::vector<TransformArgument>& inputs) {
  std::string names;
  for (const auto& input : inputs) names += (names.empty() ? "'" : ", '") + input.path.string() + "'";
  return "the transform of " + names;
}

int run_transform(const TransformOptions& o) {
  std::vector<TransformArgument> inputs;
  for (const auto& text : o.inputs) inputs.push_back(parse_transform_argument(text));
  const TransformArgument output = parse_transform_argument(o.output);
  if (output.src || output.ref)
    throw UserError("output '" + output.path.string() +
                    "': its images are the chain's first and last, given as --src and --ref");
  const std::optional<TransformFormat> in_format = format_option(o.in_format);
  const std::optional<TransformFormat> out_named = output.format ? output.format : format_option(o.out_format);
  const TransformFormat out_format = out_named ? *out_named : output_transform_format(output.path);
  ChainImages images(o, inputs);

  // Input i maps reference world i+1 to moving world i, so the chain's matrix, reference world
  // n -> moving world 0, is their product in the given order.
  Eigen::Matrix4d ref_to_mov = Eigen::Matrix4d::Identity();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TransformArgument& input = inputs[i];
    const std::optional<TransformFormat> named = input.format ? input.format : in_format;
    const TransformFormat format = named ? *named : detect_transform_format(input.path);
    const FslImages fsl =
        format == TransformFormat::Fsl
            ? images.fsl_images(i, i + 1, input.path,
                                "needs them: --src and --ref (the chain's first and last images) "
                                "or PATH:src=IMAGE:ref=IMAGE")
            : FslImages{};
    ref_to_mov = ref_to_mov * read_transform(input.path, format, fsl);
  }

  // Inverted, the output registers space n onto space 0.
  const size_t n = inputs.size();
  if (o.invert) ref_to_mov = checked_inverse(ref_to_mov, chain_name(inputs));
  const FslImages fsl =
      out_format == TransformFormat::Fsl
          ? images.fsl_images(o.invert ? n : 0, o.invert ? 0 : n, output.path,
                              "writing it needs --src and --ref (the chain's first and last images)")
          : FslImages{};
  write_transform(output.path, out_format, ref_to_mov, fsl);
  std::printf("wrote %s (%s)\n", output.path.c_str(), format_name(out_format));
  return kExitOk;
}

}  // namespace

Command add_transform(CLI::App& app) {
  auto o = std::make_shared<TransformOptions>();
  app.add_option("inputs", o->inputs,
                 "Transform files, a chain in the order an image goes through them "
                 "(EPI->T1 then T1->MNI gives EPI->MNI): [FORMAT:]PATH[:src=IMAGE][:ref=IMAGE]")
      ->required();
  app.add_option("-o,--output", o->output, "Transform file to write: [FORMAT:]PATH")->required();
  app.add_flag("--invert", o->invert, "Write the inverse of the chain (space n onto space 0)");
  app.add_option("--src", o->src, "Image of the chain's first space (FLIRT's -in of an FSL input)")
      ->type_name("IMAGE");
  app.add_option("--ref", o->ref, "Image of the chain's last space (FLIRT's -ref of an FSL input)")
      ->type_name("IMAGE");
  const std::vector<std::string> formats{"fsl", "itk", "ants", "world"};
  app.add_option("--in-format", o->in_format,
                 "Format of inputs without a FORMAT: prefix (default: from extension and content)")
      ->check(CLI::IsMember(formats));
  app.add_option("--out-format", o->out_format, "Format of the output (default: from its extension)")
      ->check(CLI::IsMember(formats));
  return [o] { return run_transform(*o); };
}

}  // namespace regpipe::cli
