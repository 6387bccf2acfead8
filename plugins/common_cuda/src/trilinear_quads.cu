#include "regpipe_common_cuda/trilinear_quads.hpp"

#include "regpipe_common_cuda/cuda_check.hpp"
#include "regpipe_common_cuda/kernel_loading.hpp"

#include <algorithm>

namespace regpipe_common_cuda {
namespace {

__global__ void trilinear_quads_kernel(const float* __restrict__ values, regpipe_common::Grid g,
                                       float4* __restrict__ quads) {
  const uint32_t count = uint32_t(g.nx) * uint32_t(g.ny) * uint32_t(g.nz);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const uint32_t x = i % uint32_t(g.nx), y = i / uint32_t(g.nx) % uint32_t(g.ny);
    const uint32_t dx = x + 1 < uint32_t(g.nx) ? 1 : 0, dy = y + 1 < uint32_t(g.ny) ? uint32_t(g.nx) : 0;
    quads[i] = make_float4(values[i], values[i + dx], values[i + dy], values[i + dy + dx]);
  }
}

}  // namespace

void load_trilinear_quads_kernel() { load_kernels({reinterpret_cast<const void*>(trilinear_quads_kernel)}); }

void make_trilinear_quads(const float* values, const regpipe_common::Grid& grid, float4* quads, cudaStream_t stream) {
  const std::size_t count = regpipe_common::voxel_count(grid);
  const unsigned blocks = unsigned(std::min<std::size_t>((count + 255) / 256, 4096));
  trilinear_quads_kernel<<<blocks, 256, 0, stream>>>(values, grid, quads);
  RP_CUDA_CHECK_LAUNCH("trilinear_quads_kernel");
}

const float4* TrilinearQuads::for_call(std::size_t k, const float* values, const regpipe_common::Grid& grid,
                                       std::size_t l2_bytes, cudaStream_t stream) {
  const std::size_t voxels = regpipe_common::voxel_count(grid);
  if (!reads_trilinear_quads(k, voxels, l2_bytes)) return nullptr;
  if (!ready_) {
    std::size_t free_bytes = 0, total_bytes = 0;
    RP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (voxels * sizeof(float4) > free_bytes / 2 && quads_.capacity() < voxels) return nullptr;
    quads_.ensure(voxels);
    make_trilinear_quads(values, grid, quads_.get(), stream);
    ready_ = true;
  }
  return quads_.get();
}

}  // namespace regpipe_common_cuda
