#include "gaussian_prefilter.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace regpipe::resample {
namespace {

constexpr double kTruncation = 3.0;  // kernel radius in standard deviations

// Weights for offsets 0..radius (the kernel is symmetric), unnormalised: each output
// normalises by the weights of the taps it actually used.
std::vector<double> half_kernel(double sigma, size_t line_length) {
  // Taps beyond the line never contribute, so the radius never needs to exceed it.
  const size_t radius = std::min(static_cast<size_t>(std::ceil(kTruncation * sigma)),
                                 line_length > 0 ? line_length - 1 : 0);
  std::vector<double> w(radius + 1);
  for (size_t k = 0; k <= radius; ++k) w[k] = std::exp(-0.5 * (k / sigma) * (k / sigma));
  return w;
}

}  // namespace

void gaussian_smooth(float* data, const Dims& dims, const std::array<double, 3>& sigma_voxels,
                     unsigned threads, const std::function<bool()>& cancelled) {
  for (int axis = 0; axis < 3; ++axis) {
    if (!(sigma_voxels[axis] > 0.0) || dims[axis] == 1) continue;
    const std::vector<double> w = half_kernel(sigma_voxels[axis], dims[axis]);
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
