#include "bspline.hpp"

#include <regpipe_common/bspline.hpp>

namespace regpipe::resample {

std::vector<double> bspline_coefficients(const float* data, const Dims& dims, unsigned threads,
                                         const std::function<bool()>& cancelled) {
  std::vector<double> c(data, data + static_cast<size_t>(dims[0]) * dims[1] * dims[2]);
  for (int axis = 0; axis < 3; ++axis) {
    if (dims[axis] == 1) continue;
    for_each_line(dims, axis, threads, cancelled, [&](size_t first, size_t stride, size_t n) {
      // Filtered in a contiguous copy: the strided line would miss the cache at every step.
      std::vector<double> line(n);
      for (size_t m = 0; m < n; ++m) line[m] = c[first + m * stride];
      regpipe_common::bspline_filter_line(line.data(), static_cast<long>(n), 1);
      for (size_t m = 0; m < n; ++m) c[first + m * stride] = line[m];
    });
  }
  return c;
}

}  // namespace regpipe::resample
