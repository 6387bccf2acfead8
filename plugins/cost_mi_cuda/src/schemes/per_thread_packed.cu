// per_thread_packed (Shams & Kennedy 2007, method 2; Shams et al. 2010 section 4.1.2): every
// thread of a block keeps its own bins x bins histogram of b-bit counters packed 32 / b to a
// word in shared memory, b = s_max * 32 / (B * N_b) (the paper's eq. 10) rounded down to 16, 8,
// 4 or 2. A thread alone touches its counters, so they need no atomics; a counter about to
// overflow is cleared and 2^b added to the transform's histogram in global memory. At the end
// the block sums each counter over its threads and adds the non-zero totals to global memory.
// Adapted for Hopper: the paper flushes into one global partial histogram per thread, reduced
// afterwards (no global atomics on its GPUs); here the flush is a global atomicAdd into the
// transform's one histogram (per-thread global histograms of 256 x 256 bins for the ~10^5
// threads of an H100 would take gigabytes). Integer counts: exact and bitwise repeatable.
#include "block_runs.hpp"

#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>

namespace regpipe::cost_mi_cuda {
namespace {

// Widths b the counters may have: a power of two so that a counter never straddles two words.
constexpr int kWidestCounter = 16, kNarrowestCounter = 2;

// Shared layout: row w holds word w of every thread's histogram, thread t's at column t
// (packed[w * blockDim.x + t]), so the lanes of a warp updating the same word of their own
// histograms hit 32 different banks.
template <int Bits>
__global__ void per_thread_packed_kernel(MiArgs a, uint32_t voxels, uint32_t run, int first_transform) {
  extern __shared__ unsigned packed[];
  constexpr int kPerWord = 32 / Bits;
  constexpr unsigned kFull = (1u << Bits) - 1u;
  const int entries = a.bins * a.bins;
  const int rows = (entries + kPerWord - 1) / kPerWord;
  const int threads = int(blockDim.x);
  for (int i = int(threadIdx.x); i < rows * threads; i += threads) packed[i] = 0u;
  __syncthreads();

  const int t = first_transform + int(blockIdx.y);
  const double* m = a.maps + 12 * std::size_t(t);
  unsigned* joint = a.joint + std::size_t(t) * std::size_t(entries);
  const uint32_t begin = blockIdx.x * run;
  const uint32_t end = min(begin + run, voxels);
  unsigned* own = packed + threadIdx.x;
  for (uint32_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const int bin = joint_bin(a, m, i);
    if (bin < 0) continue;
    unsigned& word = own[std::size_t(bin / kPerWord) * threads];
    const int shift = (bin % kPerWord) * Bits;
    if (((word >> shift) & kFull) == kFull) {  // this sample would overflow the counter
      word &= ~(kFull << shift);
      atomicAdd(joint + bin, kFull + 1u);
    } else {
      word += 1u << shift;
    }
  }
  __syncthreads();

  // Entry e summed over the threads, each lane starting at another column (no bank conflict).
  for (int e = int(threadIdx.x); e < entries; e += threads) {
    const unsigned* row = packed + std::size_t(e / kPerWord) * threads;
    const int shift = (e % kPerWord) * Bits;
    unsigned total = 0u;
    for (int j = 0; j < threads; ++j) total += (row[(j + int(threadIdx.x)) % threads] >> shift) & kFull;
    if (total != 0u) atomicAdd(joint + e, total);
  }
}

// The paper's eq. 10 rounded down to a supported width; 0 when even the narrowest does not fit.
int counter_bits(int bins, int threads_per_block, std::size_t shared_per_block) {
  const std::size_t entries = std::size_t(bins) * std::size_t(bins);
  for (int bits = kWidestCounter; bits >= kNarrowestCounter; bits /= 2) {
    const std::size_t words = (entries * std::size_t(bits) + 31) / 32 * std::size_t(threads_per_block);
    if (words * sizeof(unsigned) <= shared_per_block) return bits;
  }
  return 0;
}

}  // namespace

std::size_t per_thread_packed_shared_bytes(int bins, int threads_per_block, std::size_t shared_per_block) {
  const int bits = counter_bits(bins, threads_per_block, shared_per_block);
  if (bits == 0) return 0;
  const std::size_t entries = std::size_t(bins) * std::size_t(bins);
  const std::size_t per_word = std::size_t(32 / bits);
  return (entries + per_word - 1) / per_word * std::size_t(threads_per_block) * sizeof(unsigned);
}

void run_per_thread_packed(const SchemeLaunch& l) {
  const int bits = counter_bits(l.args.bins, l.threads_per_block, l.shared_per_block);
  const std::size_t bytes = per_thread_packed_shared_bytes(l.args.bins, l.threads_per_block, l.shared_per_block);
  const auto kernel = bits == 16  ? per_thread_packed_kernel<16>
                      : bits == 8 ? per_thread_packed_kernel<8>
                      : bits == 4 ? per_thread_packed_kernel<4>
                                  : per_thread_packed_kernel<2>;
  RP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  // The final sum reads threads x bins^2 counters per block, so a block should count many
  // samples: about one block an SM over all k transforms (the histograms allow no more anyway).
  const BlockRuns runs = block_runs(l, std::size_t(l.voxel_count), 1, 1);
  for_each_transform_batch(l.k, [&](int first, unsigned count) {
    kernel<<<dim3(runs.blocks, count), l.threads_per_block, bytes, l.stream>>>(l.args, l.voxel_count, runs.run,
                                                                                first);
    RP_CUDA_CHECK_LAUNCH("per_thread_packed_kernel");
  });
}

}  // namespace regpipe::cost_mi_cuda
