// approximate (Shams & Barnes 2007, section 2.4): NOT the exact histogram. A block counts a
// run of reference voxels of one transform; its N threads read the run in coalesced passes,
// thread t the positions base + t, base + t + N, ..., and thread t owns the joint bins
// floor(B t / N) <= b < floor(B (t + 1) / N) (the paper's eq. 5, B = bins^2 joint bins): it
// counts a sample only when the sample's joint bin is one of its own and discards it otherwise.
// So every sample is seen by one thread and counted with a chance of about 1/N: the histogram
// is a data-dependent 1-in-N subsample of the exact one, and no two threads ever update one
// counter. The block's histogram is bins^2 8-bit counters in shared memory (the paper's width
// for 10 000 bins); a counter about to overflow is cleared and 256 added to global memory.
// What is selected depends only on a voxel's index modulo N (runs are multiples of N), not on
// the launch, so costs are bitwise repeatable and independent of k. The error this makes is
// stated (and tested) in the README.
// Adapted for Hopper: the paper keeps one partial histogram per block in global memory and
// reduces them (no atomics on compute capability 1.0); here overflows and the block's final
// counts go to the transform's histogram through global atomicAdd. The paper's input is a
// precomputed array of combined intensities; here a thread first checks whether the voxel's
// reference bin can fall in its range (a row of the joint histogram) and samples the moving
// image only then, which selects exactly the same samples for far less work.
#include "block_runs.hpp"

#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>
#include <climits>

namespace regpipe::cost_mi_cuda {
namespace {

__global__ void approximate_kernel(MiArgs a, uint32_t voxels, uint32_t run, int first_transform) {
  extern __shared__ unsigned words[];  // the block's entries 8-bit counters, 4 a word
  auto* counts = reinterpret_cast<unsigned char*>(words);
  const int entries = a.bins * a.bins;
  for (int i = int(threadIdx.x); i < (entries + 3) / 4; i += int(blockDim.x)) words[i] = 0u;
  __syncthreads();

  const int t = first_transform + int(blockIdx.y);
  const double* m = a.maps + 12 * std::size_t(t);
  unsigned* joint = a.joint + std::size_t(t) * std::size_t(entries);
  // This thread's joint bins [lo, hi) (eq. 5) and the rows of the joint histogram they touch.
  const int n = int(blockDim.x);
  const int lo = int(uint64_t(entries) * threadIdx.x / unsigned(n));
  const int hi = int(uint64_t(entries) * (threadIdx.x + 1u) / unsigned(n));
  if (lo < hi) {  // with fewer joint bins than threads some threads own none
    const int first_row = lo / a.bins, last_row = (hi - 1) / a.bins;
    const uint32_t begin = blockIdx.x * run;
    const uint32_t end = min(begin + run, voxels);
    for (uint32_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const int r = ref_bin(a, i);
      if (r < first_row || r > last_row) continue;  // its joint bin cannot be one of ours
      const int mov = moving_bin(a, m, i);
      if (mov < 0) continue;
      const int bin = r * a.bins + mov;
      if (bin < lo || bin >= hi) continue;
      const unsigned char c = counts[bin];  // ours alone: a plain byte read and write
      if (c == 255u) {
        counts[bin] = 0;
        atomicAdd(joint + bin, 256u);
      } else {
        counts[bin] = static_cast<unsigned char>(c + 1u);
      }
    }
  }
  __syncthreads();
  for (int e = int(threadIdx.x); e < entries; e += int(blockDim.x))
    if (counts[e] != 0) atomicAdd(joint + e, unsigned(counts[e]));
}

}  // namespace

std::size_t approximate_shared_bytes(int bins, int, std::size_t shared_per_block) {
  const std::size_t bytes = (std::size_t(bins) * std::size_t(bins) + 3) / 4 * sizeof(unsigned);
  return bytes <= shared_per_block ? bytes : 0;
}

void run_approximate(const SchemeLaunch& l) {
  const std::size_t bytes = approximate_shared_bytes(l.args.bins, l.threads_per_block, l.shared_per_block);
  RP_CUDA_CHECK(cudaFuncSetAttribute(approximate_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  // Runs a multiple of the block's width, so that voxel i is always read by thread i mod N.
  const std::size_t n = std::size_t(l.threads_per_block);
  const BlockRuns runs = block_runs(l, std::size_t(INT_MAX) / n * n, n, 4);
  for_each_transform_batch(l.k, [&](int first, unsigned count) {
    approximate_kernel<<<dim3(runs.blocks, count), l.threads_per_block, bytes, l.stream>>>(l.args, l.voxel_count,
                                                                                           runs.run, first);
    RP_CUDA_CHECK_LAUNCH("approximate_kernel");
  });
}

}  // namespace regpipe::cost_mi_cuda
