// Box sums along one line by prefix sums: O(n) whatever the radius, which is what makes the
// local correlation O(N) in the window size (Luo et al. 2015 reuse the sums of the previous
// window; prefix differences do the same without drift along the line).
#pragma once

#include <cstddef>
#include <vector>

namespace regpipe_common::dense_metrics {

// out[i] = sum of in[j] for |j - i| <= radius and 0 <= j < n: the window is clipped at the
// ends of the line, as ANTs' neighbourhood iterator skips the voxels outside the image.
// `prefix` is scratch (resized to n + 1).
inline void box_sum_line(const double* in, double* out, std::size_t n, std::size_t radius,
                         std::vector<double>& prefix) {
  prefix.resize(n + 1);
  prefix[0] = 0.0;
  for (std::size_t j = 0; j < n; ++j) prefix[j + 1] = prefix[j] + in[j];
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t first = i > radius ? i - radius : 0;
    const std::size_t last = i + radius < n ? i + radius : n - 1;
    out[i] = prefix[last + 1] - prefix[first];
  }
}

}  // namespace regpipe_common::dense_metrics
