// regpipe transform INPUT... -o OUTPUT: convert, concatenate and invert affine transform files
// (FSL .mat, ITK .tfm/.txt/.h5, ANTs' binary .mat, RAS world 4x4).
//
// The inputs are a chain in the order an image goes through them: INPUT 1 registers space 0
// onto space 1, INPUT 2 space 1 onto space 2, ...; the output registers space 0 onto space n
// (docs/coordinates.md). --src and --ref are the images of space 0 and space n; the spaces in
// between get theirs from an input's own :src= / :ref=.
#include "commands.hpp"
#include "transform_argument.hpp"
#include "transform_chain.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include <cstdio>
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

int run_transform(const TransformOptions& o) {
  std::vector<TransformArgument> inputs;
  for (const auto& text : o.inputs) inputs.push_back(parse_transform_argument(text));
  const TransformArgument output = parse_transform_argument(o.output);
  if (output.warp)
    throw UserError("output '" + output.path.string() +
                    "': regpipe transform writes affine transforms, not displacement fields");
  if (output.src || output.ref)
    throw UserError("output '" + output.path.string() +
                    "': its images are the chain's first and last, given as --src and --ref");
  const std::optional<TransformFormat> in_format = format_option(o.in_format);
  const std::optional<TransformFormat> out_named = output.format ? output.format : format_option(o.out_format);
  const TransformFormat out_format = out_named ? *out_named : output_transform_format(output.path);
  ChainImages images(inputs.size());
  if (!o.src.empty()) images.name(0, o.src, "--src");
  if (!o.ref.empty()) images.name(inputs.size(), o.ref, "--ref");
  images.name_from(inputs);
  Eigen::Matrix4d ref_to_mov =
      compose_chain(inputs, in_format, images,
                    "needs them: --src and --ref (the chain's first and last images) "
                    "or PATH:src=IMAGE:ref=IMAGE");

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
