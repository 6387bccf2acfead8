// The device side of the non-finite check (device_checks.hpp): a kernel that reads voxel i of
// both images notes it here, so a metric whose pass reads them anyway needs no check of its own.
#pragma once

#include <cstddef>

namespace regpipe::cost_dense_cuda {

// first[0] / first[1] <- the lower of themselves and i where a / b is not finite.
__device__ __forceinline__ void note_non_finite(float a, float b, std::size_t i, unsigned long long* first) {
  if (!isfinite(a)) atomicMin(first, static_cast<unsigned long long>(i));
  if (!isfinite(b)) atomicMin(first + 1, static_cast<unsigned long long>(i));
}

}  // namespace regpipe::cost_dense_cuda
