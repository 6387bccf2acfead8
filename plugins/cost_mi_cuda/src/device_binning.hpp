// The reference's bins computed on the device from an image in device memory
// (RP_EXT_DEVICE_IMAGE): bin_of per voxel, the host path's arithmetic (one float subtraction
// and product, no contraction to fuse: the plugin is built with --fmad=false), so the same bins.
#pragma once

#include <regpipe_common/prepared_image.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace regpipe::cost_mi_cuda {

void launch_bin_voxels(const float* values, std::size_t count, const regpipe_common::IntensityBinning& binning,
                       uint16_t* bins, cudaStream_t stream);

}  // namespace regpipe::cost_mi_cuda
