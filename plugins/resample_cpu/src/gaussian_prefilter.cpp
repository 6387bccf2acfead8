#include "gaussian_prefilter.hpp"

#include <regpipe_common/resample_request.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace regpipe::resample {
namespace {

// sums[i] += w[|d|] * line[i + d] for d = -radius..radius in that order, i in [begin, end):
// each voxel's sum built tap by tap in ascending order, many voxels per instruction (4-wide
// with AVX2 where the CPU has it; multiply and add apart, no FMA, so the same bits).
__attribute__((target_clones("avx2", "default"))) void add_taps(double* sums, const double* line,
                                                                long begin, long end,
                                                                const double* w, long radius) {
  for (long d = -radius; d <= radius; ++d) {
    const double wd = w[std::labs(d)];
    for (long i = begin; i < end; ++i) sums[i] += wd * line[i + d];
  }
}

}  // namespace

void gaussian_smooth(float* data, const Dims& dims, const std::array<double, 3>& sigma_voxels,
                     unsigned threads, const std::function<bool()>& cancelled) {
  for (int axis = 0; axis < 3; ++axis) {
    if (!(sigma_voxels[axis] > 0.0) || dims[axis] == 1) continue;
    const std::vector<double> w = regpipe_common::gaussian_half_kernel(sigma_voxels[axis], dims[axis]);
    const long radius = static_cast<long>(w.size()) - 1;
    // The full kernel's weight, summed in the order an interior voxel sums its taps.
    double interior_weight = 0.0;
    for (long d = -radius; d <= radius; ++d) interior_weight += w[static_cast<size_t>(std::labs(d))];
    for_each_line(dims, axis, threads, cancelled, [&](size_t first, size_t stride, size_t n) {
      std::vector<double> line(n), sums(n, 0.0);
      for (size_t m = 0; m < n; ++m) line[m] = data[first + m * stride];
      const long length = static_cast<long>(n);
      // Voxels whose taps all fall inside: tap by tap over all of them at once (add_taps),
      // bit for bit the sum of the voxel-by-voxel loop below.
      const long inner_begin = std::min(radius, length), inner_end = std::max(inner_begin, length - radius);
      add_taps(sums.data(), line.data(), inner_begin, inner_end, w.data(), radius);
      for (long i = inner_begin; i < inner_end; ++i)
        data[first + static_cast<size_t>(i) * stride] = static_cast<float>(sums[i] / interior_weight);
      // Voxels near the ends: the taps outside are dropped and the rest renormalised.
      for (long i = 0; i < length; ++i) {
        if (i == inner_begin) i = inner_end;
        if (i >= length) break;
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
