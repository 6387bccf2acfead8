// `regpipe validate`'s look at the files a pipeline names, without reading a voxel.
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>

#include "driver/run_outputs.hpp"

namespace regpipe {
namespace {

void check_image(const ImageInput& input, const char* key) {
  ReadOptions options;
  options.volume_index = input.volume;
  try {
    check_image_header(input.path, options);
  } catch (const UserError& e) {
    throw UserError(std::string(key) + ": " + e.what());
  }
}

}  // namespace

void check_pipeline_files(const Pipeline& p) {
  check_image(p.inputs.reference, "inputs.reference");
  for (const ImageInput& moving : p.inputs.moving) check_image(moving, "inputs.moving");
  if (p.inputs.reference_weight) check_image(*p.inputs.reference_weight, "inputs.reference_weight");
  if (p.inputs.moving_weight) check_image(*p.inputs.moving_weight, "inputs.moving_weight");
  std::error_code ec;
  if (p.evaluation.truth && !std::filesystem::is_regular_file(*p.evaluation.truth, ec))
    throw UserError("evaluation.truth " + p.evaluation.truth->string() + ": no such file");
  check_output_dir(p.outputs.dir);
}

}  // namespace regpipe
