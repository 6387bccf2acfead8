// scheme3a / scheme3b (Li & Kumar 2014, section III.C): each block keeps a shadow histogram in
// shared memory (float, shared-memory atomics), then 3a merges blocks with global atomics and
// 3b writes block partials that a separate kernel reduces in a fixed order. Neither is bitwise
// repeatable (shared-memory atomic order within a block).
#include "../kernels/cr_sample.cuh"
#include "schemes.hpp"

namespace regpipe::cost_cr_cuda {
namespace {

// Accumulates this block's share of the grid into `hist` (shared, bins * 3 floats, zeroed
// here) and returns the thread's overlap partial.
__device__ double block_histogram(const CrArgs& a, const double* m, uint32_t voxels, float* hist) {
  const int entries = a.bins * kSumsPerBin;
  for (int i = threadIdx.x; i < entries; i += blockDim.x) hist[i] = 0.f;
  __syncthreads();
  const double overlap = accumulate_with_atomics(a, m, voxels, hist);
  __syncthreads();
  return overlap;
}

__global__ void scheme3a_kernel(CrArgs a, uint32_t voxels, int t) {
  extern __shared__ float hist[];
  const double overlap = block_histogram(a, a.maps + 12 * t, voxels, hist);
  flush_block_histogram(hist, a.sums + std::size_t(t) * a.bins * kSumsPerBin, a.bins * kSumsPerBin);
  add_overlap(a.overlap + t, overlap);
}

// Block partials: partials[block * (entries + 1) + e]; entry `entries` is the overlap.
__global__ void scheme3b_kernel(CrArgs a, uint32_t voxels, int t, float* partials) {
  extern __shared__ float hist[];
  __shared__ double block_overlap;
  if (threadIdx.x == 0) block_overlap = 0.0;
  const double overlap = block_histogram(a, a.maps + 12 * t, voxels, hist);
  atomicAdd(&block_overlap, overlap);
  __syncthreads();
  const int entries = a.bins * kSumsPerBin;
  float* out = partials + std::size_t(blockIdx.x) * (entries + 1);
  for (int i = threadIdx.x; i < entries; i += blockDim.x) out[i] = hist[i];
  if (threadIdx.x == 0) out[entries] = float(block_overlap);
}

// One thread per entry sums it over the blocks in block order.
__global__ void scheme3b_merge(CrArgs a, int t, const float* partials, int blocks) {
  const int entries = a.bins * kSumsPerBin;
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e > entries) return;
  double sum = 0.0;
  for (int b = 0; b < blocks; ++b) sum += partials[std::size_t(b) * (entries + 1) + e];
  if (e < entries) a.sums[std::size_t(t) * entries + e] = sum;
  else a.overlap[t] = sum;
}

std::size_t histogram_bytes(const SchemeLaunch& l) {
  return std::size_t(l.args.bins) * kSumsPerBin * sizeof(float);
}

}  // namespace

void run_scheme3a(const SchemeLaunch& l) {
  const uint32_t voxels = l.layouts->voxel_count;
  const int blocks = grid_blocks(l, voxels);
  for (std::size_t t = 0; t < l.k; ++t) {
    scheme3a_kernel<<<blocks, l.threads_per_block, histogram_bytes(l), l.stream>>>(l.args, voxels, int(t));
    RP_CUDA_CHECK_LAUNCH("scheme3a_kernel");
  }
}

void run_scheme3b(const SchemeLaunch& l) {
  const uint32_t voxels = l.layouts->voxel_count;
  const int blocks = grid_blocks(l, voxels);
  const int entries = l.args.bins * kSumsPerBin;
  l.scratch->ensure(std::size_t(blocks) * (entries + 1));
  for (std::size_t t = 0; t < l.k; ++t) {
    scheme3b_kernel<<<blocks, l.threads_per_block, histogram_bytes(l), l.stream>>>(l.args, voxels, int(t),
                                                                                     l.scratch->get());
    RP_CUDA_CHECK_LAUNCH("scheme3b_kernel");
    scheme3b_merge<<<(entries + 1 + 255) / 256, 256, 0, l.stream>>>(l.args, int(t), l.scratch->get(), blocks);
    RP_CUDA_CHECK_LAUNCH("scheme3b_merge");
  }
}

}  // namespace regpipe::cost_cr_cuda
