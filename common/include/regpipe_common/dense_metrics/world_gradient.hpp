// A dense metric's gradient along the grid's unit axes turned into LPS world, the frame of
// abi.h's RP_EXT_DENSE_COST: with E the unit axis directions (the columns of voxel_to_world's
// linear part, normalised), g_grid = E^T g_world, so g_world = E^-T g_grid (E itself for an
// orthonormal grid, the cofactor matrix over the determinant in general).
#pragma once

#include <regpipe_common/dense_metrics/dense_image.hpp>
#include <regpipe_common/resample_request.hpp>

#include <array>
#include <cmath>
#include <span>
#include <string>

namespace regpipe_common::dense_metrics {

using Matrix3 = std::array<std::array<double, 3>, 3>;

// E^-T of the grid; throws rp::Error(RP_INVALID_ARGUMENT) for an axis that is not a finite
// non-zero vector or a singular grid.
inline Matrix3 unit_axes_inverse_transpose(const double voxel_to_world[16]) {
  Matrix3 e{};
  for (int c = 0; c < 3; ++c) {
    const double length = axis_spacing(voxel_to_world, c);
    require(std::isfinite(length) && length > 0.0,
            "voxel_to_world axis " + std::to_string(c) + " is not a finite non-zero vector");
    for (int r = 0; r < 3; ++r) e[r][c] = voxel_to_world[4 * r + c] / length;
  }
  Matrix3 cofactor{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      cofactor[r][c] = e[(r + 1) % 3][(c + 1) % 3] * e[(r + 2) % 3][(c + 2) % 3] -
                       e[(r + 1) % 3][(c + 2) % 3] * e[(r + 2) % 3][(c + 1) % 3];
  const double det = e[0][0] * cofactor[0][0] + e[0][1] * cofactor[0][1] + e[0][2] * cofactor[0][2];
  require(std::abs(det) > 1e-9, "voxel_to_world is not invertible");
  for (auto& row : cofactor)
    for (double& v : row) v /= det;
  return cofactor;
}

// world_gradient[3 i + r] = (E^-T grid_gradient_i)_r, in float as the ABI carries it.
inline void grid_gradient_to_world(const double voxel_to_world[16], std::span<const double> grid_gradient,
                                   std::span<float> world_gradient, Execution execution = Execution::parallel) {
  const Matrix3 to_world = unit_axes_inverse_transpose(voxel_to_world);
  for_each_slab(grid_gradient.size() / 3, execution, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      const double* g = &grid_gradient[3 * i];
      for (int r = 0; r < 3; ++r)
        world_gradient[3 * i + r] = float(to_world[r][0] * g[0] + to_world[r][1] * g[1] + to_world[r][2] * g[2]);
    }
  });
}

}  // namespace regpipe_common::dense_metrics
