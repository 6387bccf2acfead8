// scheme4 (Li & Kumar 2014, section III.D): one shadow histogram per warp in shared memory,
// so shared-memory atomics only contend within a warp; the warps' histograms are summed per
// block and added to global memory with atomics. Not bitwise repeatable.
#include "../kernels/cr_sample.cuh"
#include "schemes.hpp"

namespace regpipe::cost_cr_cuda {
namespace {

__global__ void scheme4_kernel(CrArgs a, uint32_t voxels, int t) {
  extern __shared__ float hists[];  // warps * entries
  const int entries = a.bins * kSumsPerBin;
  const int warps = blockDim.x / 32;
  for (int i = threadIdx.x; i < warps * entries; i += blockDim.x) hists[i] = 0.f;
  __syncthreads();
  float* hist = hists + (threadIdx.x / 32) * entries;
  const double overlap = accumulate_with_atomics(a, a.maps + 12 * t, voxels, hist);
  __syncthreads();
  double* sums = a.sums + std::size_t(t) * entries;
  for (int e = threadIdx.x; e < entries; e += blockDim.x) {
    float sum = 0.f;
    for (int w = 0; w < warps; ++w) sum += hists[w * entries + e];
    if (sum != 0.f) atomicAdd(sums + e, double(sum));
  }
  add_overlap(a.overlap + t, overlap);
}

}  // namespace

void run_scheme4(const SchemeLaunch& l) {
  const uint32_t voxels = l.layouts->voxel_count;
  const int blocks = grid_blocks(l, voxels);
  const std::size_t shared = per_warp_histogram_bytes(l.threads_per_block, l.args.bins);
  RP_CUDA_CHECK(cudaFuncSetAttribute(scheme4_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  for (std::size_t t = 0; t < l.k; ++t) {
    scheme4_kernel<<<blocks, l.threads_per_block, shared, l.stream>>>(l.args, voxels, int(t));
    RP_CUDA_CHECK_LAUNCH("scheme4_kernel");
  }
}

}  // namespace regpipe::cost_cr_cuda
