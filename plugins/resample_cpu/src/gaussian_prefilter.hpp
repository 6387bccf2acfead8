// The anti-aliasing prefilter of a multi-resolution pyramid: a separable Gaussian of standard
// deviation sigma voxels per axis, truncated at 3 sigma and normalised. At the image edges the
// taps falling outside are dropped and the rest renormalised, so a constant stays constant.
#pragma once

#include "image_lines.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace regpipe::resample {

// The voxels a smoothing must produce: every combination of one index per axis from
// index[a] (ascending, no repeats). A pyramid level reads a few planes of each axis of the
// 1 mm image (two of every eight at 8 mm), so most of the smoothing need not be done.
struct VoxelSelection {
  std::array<std::vector<uint32_t>, 3> index;
};

// Every voxel of `dims`.
VoxelSelection all_voxels(const Dims& dims);

// `input` smoothed into `out` (as many voxels, not `input`), axis after axis (x, y, z; an axis
// with sigma 0 is left alone). The selected voxels get the values smoothing the whole image
// would give them, bit for bit; the others are left as they were in `out` or with unspecified
// values. Only what the passes write is touched: on fresh zeroed memory (calloc), a coarse
// level's untouched pages are never faulted in.
void gaussian_smooth(const float* input, float* out, const Dims& dims,
                     const std::array<double, 3>& sigma_voxels, const VoxelSelection& wanted,
                     unsigned threads, const std::function<bool()>& cancelled);

}  // namespace regpipe::resample
