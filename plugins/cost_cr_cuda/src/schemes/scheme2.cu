// scheme2 (Li & Kumar 2014, section III.B): every thread owns a private shadow histogram in
// global memory (no conflicts), merged afterwards by a reduction over threads. Memory grows
// with blocks x threads x bins, which is why the paper finds it the slowest. The merge is in a
// fixed order, so results are bitwise repeatable.
#include "../kernels/cr_sample.cuh"
#include "schemes.hpp"

namespace regpipe::cost_cr_cuda {
namespace {

// Shadow layout: entry c of thread j at shadow[c * threads + j] (coalesced per entry).
__global__ void scheme2_accumulate(CrArgs a, uint32_t voxels, int t, float* shadow) {
  const double* m = a.maps + 12 * t;
  const uint32_t threads = gridDim.x * blockDim.x;
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  double overlap = 0.0;
  for (uint32_t i = j; i < voxels; i += threads) {
    const CrSample s = sample_voxel(a, m, i);
    overlap += s.overlap;
    if (!(s.weight > 0.f)) continue;
    float* bin = shadow + std::size_t(kSumsPerBin) * s.bin * threads + j;
    bin[0] += s.weight;
    bin[threads] += s.weight * s.y;
    bin[2 * std::size_t(threads)] += s.weight * s.y * s.y;
  }
  // Overlap partials go through the shadow too: entry bins*3 (fixed-order merge).
  shadow[std::size_t(kSumsPerBin) * a.bins * threads + j] = float(overlap);
}

// One block per histogram entry: sums the entry over all threads in a fixed tree order.
__global__ void scheme2_merge(CrArgs a, int t, const float* shadow, uint32_t threads) {
  __shared__ double partial[1024];
  const int entry = blockIdx.x;
  double sum = 0.0;
  for (uint32_t j = threadIdx.x; j < threads; j += blockDim.x) sum += shadow[std::size_t(entry) * threads + j];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  const int entries = a.bins * kSumsPerBin;
  if (entry < entries) a.sums[std::size_t(t) * entries + entry] = partial[0];
  else a.overlap[t] = partial[0];
}

}  // namespace

void run_scheme2(const SchemeLaunch& l) {
  const uint32_t voxels = l.layouts->voxel_count;
  const int blocks = grid_blocks(l, voxels, 2);
  const uint32_t threads = uint32_t(blocks) * uint32_t(l.threads_per_block);
  const std::size_t entries = std::size_t(l.args.bins) * kSumsPerBin + 1;  // + overlap
  l.scratch->ensure(entries * threads);
  for (std::size_t t = 0; t < l.k; ++t) {
    RP_CUDA_CHECK(cudaMemsetAsync(l.scratch->get(), 0, entries * threads * sizeof(float), l.stream));
    scheme2_accumulate<<<blocks, l.threads_per_block, 0, l.stream>>>(l.args, voxels, int(t), l.scratch->get());
    RP_CUDA_CHECK_LAUNCH("scheme2_accumulate");
    scheme2_merge<<<unsigned(entries), 256, 0, l.stream>>>(l.args, int(t), l.scratch->get(), threads);
    RP_CUDA_CHECK_LAUNCH("scheme2_merge");
  }
}

}  // namespace regpipe::cost_cr_cuda
