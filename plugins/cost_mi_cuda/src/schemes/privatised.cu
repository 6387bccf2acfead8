// privatised (ours): a block owns a run of at most kNarrowRun reference voxels of one
// transform (grid.y) and counts them into its own bins x bins histogram in shared memory,
// then adds its non-zero counters to the transform's global histogram. Lanes of a warp whose
// samples share a joint bin (mostly the background pair) are found with __match_any_sync and
// add once. Counts are integers, so the result does not depend on the order of the atomics:
// exact and bitwise repeatable.
#include "schemes.hpp"

#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>

namespace regpipe::cost_mi_cuda {
namespace {

// A block counts at most this many samples, so that a 16-bit counter cannot overflow into
// its neighbour in the same word.
constexpr uint32_t kNarrowRun = 65535;

// Narrow: two 16-bit counters a 32-bit word (entry e in word e / 2, half e % 2); wide: one.
template <bool Narrow>
__global__ void privatised_kernel(MiArgs a, uint32_t voxels, uint32_t run, int first_transform) {
  extern __shared__ unsigned hist[];
  const int entries = a.bins * a.bins;
  const int words = Narrow ? (entries + 1) / 2 : entries;
  for (int i = int(threadIdx.x); i < words; i += int(blockDim.x)) hist[i] = 0u;
  __syncthreads();

  const int t = first_transform + int(blockIdx.y);
  const double* m = a.maps + 12 * std::size_t(t);
  const uint32_t begin = blockIdx.x * run;
  const uint32_t end = min(begin + run, voxels);
  const unsigned lane = threadIdx.x & 31u;
  // Every lane runs the same iterations (block-uniform bound) so the warp votes together.
  for (uint32_t base = begin; base < end; base += blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    const int bin = i < end ? joint_bin(a, m, i) : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, bin);
    if (bin < 0 || lane != unsigned(__ffs(peers) - 1)) continue;
    const unsigned count = unsigned(__popc(peers));
    if (Narrow)
      atomicAdd(hist + bin / 2, count << (16 * (bin & 1)));
    else
      atomicAdd(hist + bin, count);
  }
  __syncthreads();

  unsigned* joint = a.joint + std::size_t(t) * std::size_t(entries);
  for (int w = int(threadIdx.x); w < words; w += int(blockDim.x)) {
    const unsigned word = hist[w];
    if (word == 0u) continue;
    if (Narrow) {
      if (word & 0xffffu) atomicAdd(joint + 2 * w, word & 0xffffu);
      if (word >> 16) atomicAdd(joint + 2 * w + 1, word >> 16);
    } else {
      atomicAdd(joint + w, word);
    }
  }
}

bool narrow(int bins, std::size_t shared_per_block) {
  return std::size_t(bins) * std::size_t(bins) * sizeof(unsigned) > shared_per_block;
}

}  // namespace

std::size_t privatised_shared_bytes(int bins, int, std::size_t shared_per_block) {
  const std::size_t entries = std::size_t(bins) * std::size_t(bins);
  const std::size_t bytes =
      narrow(bins, shared_per_block) ? (entries + 1) / 2 * sizeof(unsigned) : entries * sizeof(unsigned);
  return bytes <= shared_per_block ? bytes : 0;
}

void run_privatised(const SchemeLaunch& l) {
  const bool is_narrow = narrow(l.args.bins, l.shared_per_block);
  const std::size_t bytes = privatised_shared_bytes(l.args.bins, l.threads_per_block, l.shared_per_block);
  const auto kernel = is_narrow ? privatised_kernel<true> : privatised_kernel<false>;
  RP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  // Runs short enough for 16-bit counters and numerous enough that the k transforms together
  // give every SM a few blocks; no shorter than a block's width.
  const uint32_t voxels = l.voxel_count;
  const std::size_t wanted = std::max<std::size_t>(1, std::size_t(4 * l.sm_count) / l.k);
  uint32_t run = uint32_t(std::min<std::size_t>(kNarrowRun, (voxels + wanted - 1) / wanted));
  run = std::max<uint32_t>(run, uint32_t(l.threads_per_block));
  const unsigned blocks_x = (voxels + run - 1) / run;
  constexpr std::size_t kMaxGridY = 65535;
  for (std::size_t first = 0; first < l.k; first += kMaxGridY) {
    const unsigned batch = unsigned(std::min(kMaxGridY, l.k - first));
    kernel<<<dim3(blocks_x, batch), l.threads_per_block, bytes, l.stream>>>(l.args, voxels, run, int(first));
    RP_CUDA_CHECK_LAUNCH("privatised_kernel");
  }
}

}  // namespace regpipe::cost_mi_cuda
