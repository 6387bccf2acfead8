// Checks of images in device memory before a dense evaluation.
#pragma once

#include <regpipe_common_cuda/device_buffer.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

struct NonFinite {
  std::size_t a, b;  // the first non-finite value's index in each array, n where all are finite
};

// Both arrays of n values checked in one pass and one stream synchronisation. `scratch` holds
// two values.
NonFinite first_non_finite(const float* a, const float* b, std::size_t n,
                           regpipe_common_cuda::DeviceBuffer<unsigned long long>& scratch, cudaStream_t stream);

}  // namespace regpipe::cost_dense_cuda
