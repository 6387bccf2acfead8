// Checks of images in device memory before a dense evaluation.
#pragma once

#include <regpipe_common_cuda/device_buffer.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

// The index of the first non-finite value of data[0, n) (n when all are finite); synchronises
// the stream. `scratch` holds one value.
std::size_t first_non_finite(const float* data, std::size_t n, regpipe_common_cuda::DeviceBuffer<unsigned long long>& scratch,
                             cudaStream_t stream);

}  // namespace regpipe::cost_dense_cuda
