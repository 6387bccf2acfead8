#include "device_checks.hpp"
#include "reduce.cuh"
#include "non_finite.cuh"

#include <regpipe_common_cuda/cuda_check.hpp>

namespace regpipe::cost_dense_cuda {
namespace {

// first[0] and first[1]: the lowest index of a non-finite value of a and of b.
__global__ void first_non_finite_kernel(const float* a, const float* b, std::size_t n, unsigned long long* first) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    note_non_finite(a[i], b[i], i, first);
}

}  // namespace

unsigned long long* NonFiniteCheck::prepare(std::size_t n, cudaStream_t stream) {
  first_.ensure(2);
  found_.ensure(2);
  n_ = n;
  RP_CUDA_CHECK(cudaMemsetAsync(first_.get(), 0xff, 2 * sizeof(unsigned long long), stream));  // "none"
  return first_.get();
}

void NonFiniteCheck::enqueue_readback(cudaStream_t stream) {
  RP_CUDA_CHECK(
      cudaMemcpyAsync(found_.get(), first_.get(), 2 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
}

void NonFiniteCheck::enqueue(const float* a, const float* b, std::size_t n, cudaStream_t stream) {
  unsigned long long* first = prepare(n, stream);
  first_non_finite_kernel<<<reduce_blocks(n, 256), 256, 0, stream>>>(a, b, n, first);
  RP_CUDA_CHECK_LAUNCH("first_non_finite_kernel");
  enqueue_readback(stream);
}

NonFinite NonFiniteCheck::result() const {
  const unsigned long long* first = found_.get();
  return {first[0] < n_ ? std::size_t(first[0]) : n_, first[1] < n_ ? std::size_t(first[1]) : n_};
}

}  // namespace regpipe::cost_dense_cuda
