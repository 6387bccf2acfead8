// A batch of phantom scans with known truths, made with `regpipe phantom`, for the tests of
// batch mode on the CPU (tests/cli) and on GPUs (tests/gpu).
#pragma once

#include <filesystem>
#include <span>
#include <string>

namespace regpipe::test {

struct PhantomCase {
  const char* name;
  const char* angle_deg;
  const char* shift_mm;
};

// Under `dir`: scans/<name>.nii.gz for each case, its truth in truths/<name>.txt (moving ->
// reference world RAS), and one reference.nii.gz (a phantom's reference does not depend on
// its misalignment). `phantom_options` sizes them ("--size 40 --voxel-mm 4"). Fails the
// calling test (ADD_FAILURE) and returns false when `regpipe phantom` does.
bool make_phantom_batch(const std::filesystem::path& dir, std::span<const PhantomCase> cases,
                        const std::string& phantom_options);

// A CPU-only pipeline over such a batch (its folder's scans/*.nii.gz; small phantoms, levels 8
// and 4 mm, outputs.dir `result`, no registered images), to be written beside it.
inline constexpr const char* kCpuPhantomBatchPipeline = R"(inputs:
  reference: reference.nii.gz
  moving: scans/*.nii.gz
registration:
  levels_mm: [8, 4]
  cost: {plugin: cpu.cr, params: {bins: 64}}
  optimizer: {plugin: optim.powell}
  resampler: {plugin: resample.cpu}
outputs:
  dir: result
  registered_image: false
)";

}  // namespace regpipe::test
