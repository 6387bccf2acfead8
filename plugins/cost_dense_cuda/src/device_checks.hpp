// Checks of images in device memory before a dense evaluation.
#pragma once

#include <regpipe_common_cuda/device_buffer.hpp>
#include <regpipe_common_cuda/pinned_buffer.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

struct NonFinite {
  std::size_t a, b;  // the first non-finite value's index in each array, n where all are finite
};

// The first non-finite value of two device arrays, found without stopping the host: enqueued
// before the evaluation, read after the stream's one synchronisation at its end (the kernels
// of this plugin run to completion on non-finite values; their results are then discarded).
class NonFiniteCheck {
 public:
  // Enqueues the check of a[0, n) and b[0, n) on `stream`.
  void enqueue(const float* a, const float* b, std::size_t n, cudaStream_t stream);
  // For a metric that checks while it reads both images (DenseProblem::first_non_finite): resets
  // the two indices to "none" on `stream` and returns them (device); then enqueue_readback.
  unsigned long long* prepare(std::size_t n, cudaStream_t stream);
  void enqueue_readback(cudaStream_t stream);
  // The result of the last enqueue; valid once its stream has been synchronised.
  NonFinite result() const;

 private:
  regpipe_common_cuda::DeviceBuffer<unsigned long long> first_;
  regpipe_common_cuda::PinnedBuffer<unsigned long long> found_;
  std::size_t n_ = 0;
};

}  // namespace regpipe::cost_dense_cuda
