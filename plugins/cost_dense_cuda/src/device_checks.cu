#include "device_checks.hpp"
#include "reduce.cuh"

#include <regpipe_common_cuda/cuda_check.hpp>

namespace regpipe::cost_dense_cuda {
namespace {

__global__ void first_non_finite_kernel(const float* data, std::size_t n, unsigned long long* first) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (!isfinite(data[i])) atomicMin(first, static_cast<unsigned long long>(i));
}

}  // namespace

std::size_t first_non_finite(const float* data, std::size_t n, regpipe_common_cuda::DeviceBuffer<unsigned long long>& scratch,
                             cudaStream_t stream) {
  scratch.ensure(1);
  const unsigned long long none = n;
  RP_CUDA_CHECK(cudaMemcpyAsync(scratch.get(), &none, sizeof(none), cudaMemcpyHostToDevice, stream));
  first_non_finite_kernel<<<reduce_blocks(n, 256), 256, 0, stream>>>(data, n, scratch.get());
  RP_CUDA_CHECK_LAUNCH("first_non_finite_kernel");
  unsigned long long first = n;
  RP_CUDA_CHECK(cudaMemcpyAsync(&first, scratch.get(), sizeof(first), cudaMemcpyDeviceToHost, stream));
  RP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return std::size_t(first);
}

}  // namespace regpipe::cost_dense_cuda
