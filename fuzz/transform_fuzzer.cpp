// libFuzzer target: reading a transform file as regpipe detects it (FSL's text .mat or
// ANTs' binary .mat, ITK's .tfm, ITK's text or a world matrix as .txt). The first byte picks
// the extension, the rest is the file. FSL matrices are read against two small fixed grids.
// Every refusal must be a UserError; anything else escaping or a crash is a finding.
#include "scratch_file.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/transform_file.hpp>

#include <iterator>

namespace {

constexpr const char* kFileNames[] = {"input.mat", "input.tfm", "input.txt"};

regpipe::Image grid(double voxel_mm) {
  regpipe::Image image;
  image.dims = {5, 6, 7};
  image.voxel_to_world.topLeftCorner<3, 3>() *= voxel_mm;
  image.data.assign(image.voxel_count(), 0.0f);
  return image;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const regpipe::Image moving = grid(2.0), reference = grid(1.5);
  if (size < 1) return 0;
  const auto path = regpipe::fuzz::scratch_path(kFileNames[data[0] % std::size(kFileNames)]);
  regpipe::fuzz::write_file(path, data + 1, size - 1);
  try {
    regpipe::read_transform(path, regpipe::detect_transform_format(path), {&moving, &reference});
  } catch (const regpipe::UserError&) {
  }
  return 0;
}
