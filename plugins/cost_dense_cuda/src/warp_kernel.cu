// The dense costs' affine path: the moving image resampled onto the reference grid with weights,
// through regpipe_common::warp_voxel, the function cpu.lcc and cpu.mattes call. Compiled with --fmad=false
// (CMakeLists.txt): no contraction into fused multiply-adds, so positions and trilinear values
// are the host's bit for bit.
#include "warp_kernel.hpp"
#include "reduce.cuh"

#include <regpipe_common/warp_sample.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

namespace regpipe::cost_dense_cuda {
namespace {

__global__ void warp_kernel(WarpProblem p, std::size_t n, double* partials) {
  double inside_weight = 0.0;
  const std::size_t nx = std::size_t(p.ref_grid.nx), plane = nx * std::size_t(p.ref_grid.ny);
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int x = int(i % nx), y = int(i % plane / nx), z = int(i / plane);
    const float w_ref = p.ref_weight == nullptr ? 1.f : p.ref_weight[i];
    const regpipe_common::WarpedVoxel v =
        regpipe_common::warp_voxel(p.map, x, y, z, w_ref, p.mov_values, p.mov_weight, p.mov_grid);
    p.warped_out[i] = v.value;
    p.weight_out[i] = v.weight;
    inside_weight += v.overlap;
  }
  inside_weight = block_sum(inside_weight);
  if (threadIdx.x == 0) partials[blockIdx.x] = inside_weight;
}

}  // namespace

void run_warp(const WarpProblem& problem, regpipe_common_cuda::DeviceBuffer<double>& partials, cudaStream_t stream,
              double* inside_weight_out) {
  const std::size_t n = regpipe_common::voxel_count(problem.ref_grid);
  const int threads = problem.threads_per_block;
  const int blocks = reduce_blocks(n, threads);
  partials.ensure(std::size_t(kMaxReduceBlocks) * 8);
  warp_kernel<<<blocks, threads, 0, stream>>>(problem, n, partials.get());
  RP_CUDA_CHECK_LAUNCH("warp_kernel");
  finish_sums<<<1, 256, 0, stream>>>(partials.get(), blocks, 1, inside_weight_out);
  RP_CUDA_CHECK_LAUNCH("finish_sums");
}

}  // namespace regpipe::cost_dense_cuda
