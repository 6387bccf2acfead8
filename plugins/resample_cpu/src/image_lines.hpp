// Separable filters (the Gaussian prefilter, the B-spline coefficient filter) work on whole
// lines of voxels along one axis; this visits them in parallel.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace regpipe::resample {

using Dims = std::array<uint32_t, 3>;

// Calls line(first, stride, n) for every line along `axis` (0 = x, 1 = y, 2 = z): its voxels
// are at first + m * stride for m < n (x fastest layout). Lines of one z slice (x and y axes)
// or of one y row (z axis) go to the same thread. Cancellation as in parallel_for.
void for_each_line(const Dims& dims, int axis, unsigned threads,
                   const std::function<bool()>& cancelled,
                   const std::function<void(size_t first, size_t stride, size_t n)>& line);

}  // namespace regpipe::resample
