// per_warp (Shams & Kennedy 2007, method 1): every warp of a block counts into its own
// bins x bins histogram of 32-bit counters in shared memory, so that only the lanes of one
// warp contend for a counter. The paper serialises a warp's colliding updates with a tag in the
// counter's high bits (GPUs then had no shared-memory atomics); here a native shared atomicAdd
// does that. At the end the block sums each counter over its warps in warp order and adds the
// non-zero totals to the transform's global histogram. Integer counts: exact and repeatable.
#include "block_runs.hpp"

#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>

namespace regpipe::cost_mi_cuda {
namespace {

__global__ void per_warp_kernel(MiArgs a, uint32_t voxels, int first_transform) {
  extern __shared__ unsigned hists[];  // warps * entries
  const int entries = a.bins * a.bins;
  const int warps = int(blockDim.x / 32);
  for (int i = int(threadIdx.x); i < warps * entries; i += int(blockDim.x)) hists[i] = 0u;
  __syncthreads();

  const int t = first_transform + int(blockIdx.y);
  const double* m = a.maps + 12 * std::size_t(t);
  unsigned* own = hists + std::size_t(threadIdx.x / 32) * entries;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < voxels; i += gridDim.x * blockDim.x) {
    const int bin = joint_bin(a, m, i);
    if (bin >= 0) atomicAdd(own + bin, 1u);
  }
  __syncthreads();

  unsigned* joint = a.joint + std::size_t(t) * std::size_t(entries);
  for (int e = int(threadIdx.x); e < entries; e += int(blockDim.x)) {
    unsigned total = 0u;
    for (int w = 0; w < warps; ++w) total += hists[std::size_t(w) * entries + e];
    if (total != 0u) atomicAdd(joint + e, total);
  }
}

}  // namespace

std::size_t per_warp_shared_bytes(int bins, int threads_per_block, std::size_t shared_per_block) {
  const std::size_t bytes =
      std::size_t(threads_per_block / 32) * std::size_t(bins) * std::size_t(bins) * sizeof(unsigned);
  return bytes <= shared_per_block ? bytes : 0;
}

void run_per_warp(const SchemeLaunch& l) {
  const std::size_t bytes = per_warp_shared_bytes(l.args.bins, l.threads_per_block, l.shared_per_block);
  RP_CUDA_CHECK(cudaFuncSetAttribute(per_warp_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  // A few blocks an SM over all k transforms, no more than the voxels need.
  const std::size_t per_transform = std::max<std::size_t>(1, std::size_t(4 * l.sm_count) / l.k);
  const std::size_t needed = (l.voxel_count + std::size_t(l.threads_per_block) - 1) / std::size_t(l.threads_per_block);
  const unsigned blocks_x = unsigned(std::min(per_transform, std::max<std::size_t>(needed, 1)));
  for_each_transform_batch(l.k, [&](int first, unsigned count) {
    per_warp_kernel<<<dim3(blocks_x, count), l.threads_per_block, bytes, l.stream>>>(l.args, l.voxel_count, first);
    RP_CUDA_CHECK_LAUNCH("per_warp_kernel");
  });
}

}  // namespace regpipe::cost_mi_cuda
