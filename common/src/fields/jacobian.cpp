#include <regpipe_common/fields/jacobian.hpp>

#include <regpipe_common/central_difference.hpp>

#include <algorithm>
#include <limits>

namespace regpipe_common {
namespace {

struct PlaneStats {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  std::size_t negative = 0;
};

// d u / d (voxel index along one axis) at index `at` of a line of `length`, neighbours
// `step` vectors apart (central_difference.hpp).
Vec3 index_derivative(const DisplacementFieldView& f, std::size_t i, int at, int length, std::size_t step) {
  const auto [lo, hi] = difference_neighbours(at, length);
  if (hi == lo) return {0.0, 0.0, 0.0};
  return (1.0 / double(hi - lo)) * (vector_at(f, i + (hi - at) * step) - vector_at(f, i - (at - lo) * step));
}

}  // namespace

JacobianDeterminants jacobian_determinants(const DisplacementFieldView& field, Execution execution) {
  const Grid& g = field.geometry.dims;
  const double* w2v = field.world_to_voxel;  // d index_a / d world_b = w2v[4a + b]
  JacobianDeterminants out;
  out.per_voxel.resize(voxel_count(g));
  std::vector<PlaneStats> planes(std::size_t(g.nz));
  const std::size_t sy = std::size_t(g.nx), sz = std::size_t(g.nx) * std::size_t(g.ny);
  for_each_plane(g.nz, execution, [&](int z) {
    PlaneStats& plane = planes[std::size_t(z)];
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = std::size_t(x) + sy * std::size_t(y) + sz * std::size_t(z);
        const Vec3 d_index[3] = {index_derivative(field, i, x, g.nx, 1), index_derivative(field, i, y, g.ny, sy),
                                 index_derivative(field, i, z, g.nz, sz)};
        // J[c][b] = delta_cb + sum_a du_c/di_a * di_a/dx_b
        double j[3][3];
        for (int b = 0; b < 3; ++b) {
          const Vec3 column = w2v[b] * d_index[0] + w2v[4 + b] * d_index[1] + w2v[8 + b] * d_index[2];
          j[0][b] = column.x + (b == 0);
          j[1][b] = column.y + (b == 1);
          j[2][b] = column.z + (b == 2);
        }
        const double det = j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) -
                           j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0]) +
                           j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]);
        out.per_voxel[i] = float(det);
        plane.min = std::min(plane.min, det);
        plane.max = std::max(plane.max, det);
        plane.negative += det < 0.0;
      }
  });
  PlaneStats total;
  for (const PlaneStats& p : planes) {
    total.min = std::min(total.min, p.min);
    total.max = std::max(total.max, p.max);
    total.negative += p.negative;
  }
  out.min = total.min;
  out.max = total.max;
  out.fraction_negative = double(total.negative) / double(out.per_voxel.size());
  return out;
}

}  // namespace regpipe_common
