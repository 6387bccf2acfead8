#include "gaussian_prefilter.hpp"

#include <regpipe_common/resample_request.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace regpipe::resample {

void gaussian_smooth(float* data, const Dims& dims, const std::array<double, 3>& sigma_voxels,
                     unsigned threads, const std::function<bool()>& cancelled) {
  for (int axis = 0; axis < 3; ++axis) {
    if (!(sigma_voxels[axis] > 0.0) || dims[axis] == 1) continue;
    const std::vector<double> w = regpipe_common::gaussian_half_kernel(sigma_voxels[axis], dims[axis]);
    const long radius = static_cast<long>(w.size()) - 1;
    for_each_line(dims, axis, threads, cancelled, [&](size_t first, size_t stride, size_t n) {
      std::vector<double> line(n);
      for (size_t m = 0; m < n; ++m) line[m] = data[first + m * stride];
      const long length = static_cast<long>(n);
      for (long i = 0; i < length; ++i) {
        double sum = 0.0, weight = 0.0;
        for (long j = std::max(0L, i - radius); j <= std::min(length - 1, i + radius); ++j) {
          const double wj = w[static_cast<size_t>(std::labs(j - i))];
          sum += wj * line[static_cast<size_t>(j)];
          weight += wj;
        }
        data[first + static_cast<size_t>(i) * stride] = static_cast<float>(sum / weight);
      }
    });
  }
}

}  // namespace regpipe::resample
