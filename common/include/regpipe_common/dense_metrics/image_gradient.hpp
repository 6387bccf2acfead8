// The gradient of an image on its grid by central differences, in 1/mm along the grid axes:
// what the dense costs take as moving_gradient when the caller has no better one.
#pragma once

#include <regpipe_common/central_difference.hpp>
#include <regpipe_common/dense_metrics/dense_image.hpp>

namespace regpipe_common::dense_metrics {

// Central differences inside, one-sided on the first and last planes of an axis, 0 along an
// axis of one voxel (central_difference.hpp). Returns 3 floats per voxel, interleaved.
inline std::vector<float> central_difference_gradient(const DenseGrid& grid, std::span<const float> image,
                                                      Execution execution = Execution::parallel) {
  const Grid& g = grid.dims;
  const std::size_t n = voxel_count(g);
  require(image.size() == n, "image has " + std::to_string(image.size()) + " values, the grid " + std::to_string(n));
  const long size[3] = {g.nx, g.ny, g.nz};
  const std::size_t stride[3] = {1, std::size_t(g.nx), std::size_t(g.nx) * std::size_t(g.ny)};
  std::vector<float> gradient(3 * n);
  for_each_slab(n, execution, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      const long at[3] = {long(i % g.nx), long(i / g.nx % g.ny), long(i / (std::size_t(g.nx) * g.ny))};
      for (int a = 0; a < 3; ++a) {
        const auto [lo, hi] = difference_neighbours(at[a], size[a]);
        const double rise = double(image[i + (hi - at[a]) * stride[a]]) - double(image[i - (at[a] - lo) * stride[a]]);
        gradient[3 * i + a] = hi > lo ? float(rise / (double(hi - lo) * grid.spacing_mm[a])) : 0.0f;
      }
    }
  });
  return gradient;
}

}  // namespace regpipe_common::dense_metrics
