#include "device_binning.hpp"

#include <regpipe_common/voxel_map.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>

namespace regpipe::cost_mi_cuda {
namespace {

constexpr int kThreads = 256;

__global__ void bin_kernel(const float* values, std::size_t count, float lo, float inv_width, int bins,
                           uint16_t* out) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = uint16_t(regpipe_common::bin_of(values[i], lo, inv_width, bins));
}

}  // namespace

void launch_bin_voxels(const float* values, std::size_t count, const regpipe_common::IntensityBinning& binning,
                       uint16_t* bins, cudaStream_t stream) {
  const std::size_t blocks = std::min<std::size_t>((count + kThreads - 1) / kThreads, 65535);
  bin_kernel<<<unsigned(std::max<std::size_t>(blocks, 1)), kThreads, 0, stream>>>(values, count, binning.lo,
                                                                                  binning.inv_width, binning.bins, bins);
  RP_CUDA_CHECK_LAUNCH("bin_kernel");
}

}  // namespace regpipe::cost_mi_cuda
