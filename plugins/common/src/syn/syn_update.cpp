#include <regpipe_common/syn/syn_update.hpp>

#include <regpipe_common/dense_metrics/image_gradient.hpp>
#include <regpipe_common/dense_metrics/mean_squares.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/resample_request.hpp>

#include <algorithm>
#include <cmath>

namespace regpipe_common::syn {

MetricDescent metric_descent(const FieldGeometry& grid, std::span<const float> fixed, std::span<const float> moving,
                             const SynMetric& metric, Execution execution) {
  namespace dm = dense_metrics;
  dm::DenseGrid dense{grid.dims, {}};
  Vec3 axis[3];  // unit world direction of each grid axis
  for (int a = 0; a < 3; ++a) {
    dense.spacing_mm[a] = axis_spacing(grid.voxel_to_world, a);
    const double* v = grid.voxel_to_world;
    axis[a] = (1.0 / dense.spacing_mm[a]) * Vec3{v[a], v[4 + a], v[8 + a]};
  }
  const std::vector<float> moving_gradient = dm::central_difference_gradient(dense, moving, execution);
  const dm::DenseCostInput input{dense, fixed, moving, {}, moving_gradient};
  std::vector<double> gradient(3 * voxel_count(grid.dims));
  MetricDescent out;
  switch (metric.kind) {
    case SynMetricKind::cc: out.value = dm::local_cc(input, metric.cc, gradient, execution); break;
    case SynMetricKind::mean_squares: out.value = dm::mean_squares(input, gradient, execution); break;
    case SynMetricKind::mattes:
      out.value = dm::mattes_mutual_information(input, metric.mattes, gradient, execution);
      break;
  }
  out.direction = zero_field(grid);
  float* d = out.direction.vectors.data();
  dm::for_each_slab(voxel_count(grid.dims), execution, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      const Vec3 w = (-gradient[3 * i]) * axis[0] + (-gradient[3 * i + 1]) * axis[1] + (-gradient[3 * i + 2]) * axis[2];
      d[3 * i] = float(w.x);
      d[3 * i + 1] = float(w.y);
      d[3 * i + 2] = float(w.z);
    }
  });
  return out;
}

void ants_smooth_field(DisplacementField& field, double variance_voxels, Execution execution) {
  if (!(variance_voxels > 0.0)) return;
  const DisplacementField unsmoothed = field;
  smooth_field_gaussian(field, std::sqrt(variance_voxels), execution);
  const double smoothed_weight = variance_voxels < 0.5 ? 1.0 - variance_voxels / 0.5 : 1.0;
  const Grid& g = field.geometry.dims;
  for_each_plane(g.nz, execution, [&](int z) {
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = std::size_t(x) + std::size_t(g.nx) * (std::size_t(y) + std::size_t(g.ny) * z);
        const bool border = x == 0 || y == 0 || z == 0 || x == g.nx - 1 || y == g.ny - 1 || z == g.nz - 1;
        for (int c = 0; c < 3; ++c) {
          float& v = field.vectors[3 * i + c];
          v = border ? 0.0f
                     : float(smoothed_weight * v + (1.0 - smoothed_weight) * unsmoothed.vectors[3 * i + c]);
        }
      }
  });
}

double scale_to_step(DisplacementField& field, double step_voxels) {
  // The norm in voxels: the vector in the grid's index frame (inverse of the linear part).
  const DisplacementFieldView view = view_of(field);
  const double* w = view.world_to_voxel;
  double largest = 0.0;
  for (std::size_t i = 0; i < field.vectors.size(); i += 3) {
    const Vec3 u{field.vectors[i], field.vectors[i + 1], field.vectors[i + 2]};
    const Vec3 v{w[0] * u.x + w[1] * u.y + w[2] * u.z, w[4] * u.x + w[5] * u.y + w[6] * u.z,
                 w[8] * u.x + w[9] * u.y + w[10] * u.z};
    largest = std::max(largest, norm(v));
  }
  if (largest > 0.0) {
    const double scale = step_voxels / largest;
    for (float& c : field.vectors) c = float(c * scale);
  }
  return largest;
}

}  // namespace regpipe_common::syn
