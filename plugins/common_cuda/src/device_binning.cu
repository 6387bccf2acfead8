#include "regpipe_common_cuda/device_binning.hpp"

#include "regpipe_common_cuda/cuda_check.hpp"
#include "regpipe_common_cuda/kernel_loading.hpp"

#include <regpipe_common/voxel_map.hpp>

#include <algorithm>

namespace regpipe_common_cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::size_t count) {
  return unsigned(std::max<std::size_t>(1, std::min<std::size_t>((count + kThreads - 1) / kThreads, 65535)));
}

__global__ void bin_kernel(const float* values, std::size_t count, float lo, float inv_width, int bins,
                           uint16_t* out) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = uint16_t(regpipe_common::bin_of(values[i], lo, inv_width, bins));
}

// A shared-memory histogram per block (bin_count <= 1024), merged with one global atomic per
// non-empty bin.
__global__ void count_kernel(const uint16_t* bins, std::size_t count, int bin_count, unsigned long long* counts) {
  extern __shared__ unsigned block_counts[];
  for (int b = int(threadIdx.x); b < bin_count; b += int(blockDim.x)) block_counts[b] = 0u;
  __syncthreads();
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    atomicAdd(&block_counts[bins[i]], 1u);
  __syncthreads();
  for (int b = int(threadIdx.x); b < bin_count; b += int(blockDim.x))
    if (block_counts[b] != 0u) atomicAdd(&counts[b], static_cast<unsigned long long>(block_counts[b]));
}

}  // namespace

void load_binning_kernels() {
  load_kernels({reinterpret_cast<const void*>(bin_kernel), reinterpret_cast<const void*>(count_kernel)});
}

void launch_bin_voxels(const float* values, std::size_t count, const regpipe_common::IntensityBinning& binning,
                       uint16_t* bins, cudaStream_t stream) {
  bin_kernel<<<grid_for(count), kThreads, 0, stream>>>(values, count, binning.lo, binning.inv_width, binning.bins, bins);
  RP_CUDA_CHECK_LAUNCH("bin_kernel");
}

void launch_count_bins(const uint16_t* bins, std::size_t count, int bin_count, unsigned long long* counts,
                       cudaStream_t stream) {
  // At most 1024 blocks, so that a block's 32-bit counters hold its share of any image the
  // plugins index (< 2^31 voxels).
  count_kernel<<<std::min(grid_for(count), 1024u), kThreads, std::size_t(bin_count) * sizeof(unsigned), stream>>>(
      bins, count, bin_count, counts);
  RP_CUDA_CHECK_LAUNCH("count_kernel");
}

}  // namespace regpipe_common_cuda
