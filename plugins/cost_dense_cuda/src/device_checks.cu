#include "device_checks.hpp"
#include "reduce.cuh"

#include <regpipe_common_cuda/cuda_check.hpp>

namespace regpipe::cost_dense_cuda {
namespace {

// first[0] and first[1]: the lowest index of a non-finite value of a and of b.
__global__ void first_non_finite_kernel(const float* a, const float* b, std::size_t n, unsigned long long* first) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if (!isfinite(a[i])) atomicMin(first, static_cast<unsigned long long>(i));
    if (!isfinite(b[i])) atomicMin(first + 1, static_cast<unsigned long long>(i));
  }
}

}  // namespace

NonFinite first_non_finite(const float* a, const float* b, std::size_t n,
                           regpipe_common_cuda::DeviceBuffer<unsigned long long>& scratch, cudaStream_t stream) {
  scratch.ensure(2);
  RP_CUDA_CHECK(cudaMemsetAsync(scratch.get(), 0xff, 2 * sizeof(unsigned long long), stream));  // "none"
  first_non_finite_kernel<<<reduce_blocks(n, 256), 256, 0, stream>>>(a, b, n, scratch.get());
  RP_CUDA_CHECK_LAUNCH("first_non_finite_kernel");
  unsigned long long first[2];
  RP_CUDA_CHECK(cudaMemcpyAsync(first, scratch.get(), sizeof(first), cudaMemcpyDeviceToHost, stream));
  RP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return {first[0] < n ? std::size_t(first[0]) : n, first[1] < n ? std::size_t(first[1]) : n};
}

}  // namespace regpipe::cost_dense_cuda
