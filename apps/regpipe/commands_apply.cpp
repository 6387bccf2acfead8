// regpipe apply -i INPUT -r REFERENCE -t T1 [-t T2 ...] -o OUTPUT: an image resampled onto a
// reference grid through one transform file or a chain of them (antsApplyTransforms,
// flirt -applyxfm). The chain is written as `regpipe transform` takes it, in the order the
// image goes through it (input space first); INPUT and REFERENCE are the images of its first
// and last spaces unless a file's own :src= / :ref= names another.
#include "commands.hpp"
#include "transform_chain.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/resample_image.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <unistd.h>

namespace fs = std::filesystem;

namespace regpipe::cli {
namespace {

struct ApplyOptions {
  std::string input, reference, output;
  std::vector<std::string> transforms;
  std::string interpolation = "trilinear";
  std::string datatype = "input";
  std::vector<std::string> resampler{"resample.cuda", "resample.cpu"};
  std::string in_format;
};

VoxelType output_type(const ApplyOptions& o, const Image& input) {
  if (o.datatype == "input") return input.file_type;
  return voxel_type_from_name(o.datatype).value_or(VoxelType::float32);
}

int run_apply(const ApplyOptions& o, const CommonOptions& common) {
  std::vector<TransformArgument> chain;
  for (const auto& text : o.transforms) chain.push_back(parse_transform_argument(text));
  const Interpolation interpolation = interpolation_from_name(o.interpolation);
  // A chain with a displacement field is composed and sampled here, on the CPU; one of
  // affines alone is one matrix for the resampler plugin, as it always was.
  const bool through_field = std::any_of(chain.begin(), chain.end(), names_displacement_field);
  const int32_t level = common.quiet          ? RP_LOG_ERROR
                        : common.verbose >= 2 ? RP_LOG_DEBUG
                        : common.verbose == 1 ? RP_LOG_INFO
                                              : RP_LOG_WARNING;
  HostServices services(level, false);
  services.cancel_on_sigint();
  // The resampler first: a plugin that is missing or refuses fails before any image is read.
  PluginHost plugins(search_options(common));
  std::optional<CreatedResampler> resampler;
  if (interpolation != Interpolation::label && !through_field)
    resampler = create_resampler(ComponentSpec{o.resampler, {}, {}}, plugins, services);

  const Image reference = read_image(o.reference, {0u});  // a 4D reference: its grid
  const ImageVolumes input = read_image_volumes(o.input);
  ChainImages images(chain.size());
  images.name_from(chain);
  images.name_default(0, o.input, "-i");
  images.name_default(chain.size(), o.reference, "-r");
  images.provide(o.input, input.volumes.front());
  images.provide(o.reference, reference);
  const std::string how =
      "needs them: the chain's first and last are -i and -r; name the others with "
      "PATH:src=IMAGE:ref=IMAGE";

  ImageVolumes output;
  output.volume_step = input.volume_step;
  if (through_field) {
    // Every volume samples the input at the same positions: the chain is composed once.
    const SamplePositions positions =
        chain_sample_positions(read_chain(chain, format_option(o.in_format), images, how), reference,
                               input.volumes.front());
    for (const Image& volume : input.volumes)
      output.volumes.push_back(resample_at_positions(volume, reference, positions, interpolation));
  } else {
    const Eigen::Matrix4d ref_to_mov = compose_chain(chain, format_option(o.in_format), images, how);
    for (const Image& volume : input.volumes)
      output.volumes.push_back(
          interpolation == Interpolation::label
              ? resample_labels(volume, reference, ref_to_mov)
              : resample_onto(*resampler->instance, volume, reference, ref_to_mov,
                              interpolation_code(interpolation)));
  }
  // A series keeps its own time units beside the reference's spatial header.
  for (size_t v = 0; v < output.volumes.size(); ++v)
    if (output.volumes[v].nifti && input.volumes[v].nifti)
      output.volumes[v].nifti->time_units = input.volumes[v].nifti->time_units;
  const VoxelType type = output_type(o, input.volumes.front());
  write_image_volumes(output, o.output, type);

  if (services.reports_summaries()) {
    if (resampler) std::printf("resampler %s\n", describe_used(resampler->used).c_str());
    if (through_field)
      std::printf("resampled on the CPU: the chain holds a displacement field (composed per voxel)\n");
    std::printf("wrote %s (%zu volume%s, %s, %s)\n", o.output.c_str(), output.volumes.size(),
                output.volumes.size() == 1 ? "" : "s", o.interpolation.c_str(), voxel_type_name(type));
  }
  return kExitOk;
}

}  // namespace

Command add_apply(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<ApplyOptions>();
  app.add_option("-i,--input", o->input, "Image to resample (3D, or 4D: volume by volume)")
      ->required()
      ->type_name("IMAGE");
  app.add_option("-r,--reference", o->reference,
                 "Image whose grid and NIfTI header the output takes")
      ->required()
      ->type_name("IMAGE");
  app.add_option("-t,--transform", o->transforms,
                 "Transform file (repeatable): a chain in the order the image goes through them, "
                 "input space first: [FORMAT:]PATH[:src=IMAGE][:ref=IMAGE]; affines and displacement "
                 "fields (ITK/ANTs *Warp.nii.gz, or FORMAT warp)")
      ->required()
      ->type_name("TRANSFORM");
  app.add_option("-o,--output", o->output, "Image to write (.nii.gz, .nii, .hdr, .mha, .nrrd; 4D: NIfTI)")
      ->required()
      ->type_name("IMAGE");
  app.add_option("-n,--interp", o->interpolation,
                 "nearest, trilinear, sinc, bspline, or label (label maps: per voxel, the label "
                 "with the largest trilinear weight)")
      ->check(CLI::IsMember(interpolation_names()))
      ->capture_default_str();
  std::vector<std::string> datatypes{"input"};
  for (const auto& name : voxel_type_names()) datatypes.push_back(name);
  app.add_option("--datatype", o->datatype, "Output voxel type; input: the input file's (as FLIRT)")
      ->check(CLI::IsMember(datatypes))
      ->capture_default_str();
  app.add_option("--resampler", o->resampler,
                 "Resampler plugin, or a preference list (the first that can run here)")
      ->delimiter(',')
      ->type_name("ID[,ID...]")
      ->capture_default_str();
  app.add_option("--in-format", o->in_format,
                 "Format of transforms without a FORMAT: prefix (default: from extension and content)")
      ->check(CLI::IsMember(std::vector<std::string>{"fsl", "itk", "ants", "world"}));
  add_plugin_path_options(app, common);
  app.add_flag("-q,--quiet", common.quiet, "No informational messages");
  app.add_flag("-v,--verbose", common.verbose, "More messages (repeat for debug)");
  return [o, &common] { return run_apply(*o, common); };
}

}  // namespace regpipe::cli
