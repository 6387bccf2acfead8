// Gaussian-weighted sums along one line, the Gaussian-window variant of the local
// correlation. An explicit truncated kernel, not a recursive (Deriche / Young-van Vliet)
// filter: a recursive filter is O(n) per line too but is neither exactly the clipped window
// at the border nor exactly symmetric, and the exact CC gradient needs the window's adjoint
// to be the window itself. Cost per voxel grows linearly with sigma (separable), not cubically.
// The taps are the pyramid prefilter's (gaussian_half_kernel): unnormalised, so the centre
// voxel has weight 1 in its own window as in the box; the correlation ignores the kernel's scale.
#pragma once

#include <cstddef>
#include <vector>

namespace regpipe_common::dense_metrics {

// out[i] = sum of taps[|j - i|] in[j] over the j within reach of i and inside [0, n).
inline void tapped_sum_line(const double* in, double* out, std::size_t n, const std::vector<double>& taps) {
  const std::size_t reach = taps.size() - 1;
  for (std::size_t i = 0; i < n; ++i) {
    double sum = taps[0] * in[i];
    for (std::size_t d = 1; d <= reach; ++d) {
      if (i >= d) sum += taps[d] * in[i - d];
      if (i + d < n) sum += taps[d] * in[i + d];
    }
    out[i] = sum;
  }
}

}  // namespace regpipe_common::dense_metrics
