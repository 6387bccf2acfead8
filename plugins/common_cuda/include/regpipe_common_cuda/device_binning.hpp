// A reference's bins computed on the device from an image in device memory
// (RP_EXT_DEVICE_IMAGE): bin_of per voxel with the host path's arithmetic (one float
// subtraction and product, compiled without contraction to fused multiply-adds), so the same
// bins as regpipe_common's binning on the host; and the bins' populations.
#pragma once

#include <regpipe_common/prepared_image.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace regpipe_common_cuda {

void launch_bin_voxels(const float* values, std::size_t count, const regpipe_common::IntensityBinning& binning,
                       uint16_t* bins, cudaStream_t stream);

// counts[b] += the voxels of `bins` in bin b, for b < bin_count (counts zeroed by the caller).
void launch_count_bins(const uint16_t* bins, std::size_t count, int bin_count, unsigned long long* counts,
                       cudaStream_t stream);

// Loads both launches' kernels now rather than at their first call (kernel_loading.hpp).
void load_binning_kernels();

}  // namespace regpipe_common_cuda
