#include <regpipe_common/syn/syn_update.hpp>

#include <regpipe_common/dense_metrics/image_gradient.hpp>
#include <regpipe_common/dense_metrics/mean_squares.hpp>
#include <regpipe_common/dense_metrics/world_gradient.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/resample_request.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace regpipe_common::syn {

SynMetricFunction builtin_metric(const SynMetric& metric, Execution execution) {
  return [metric, execution](const SynMetricInput& in, std::span<float> gradient_world) {
    namespace dm = dense_metrics;
    const FieldGeometry& grid = in.grid;
    dm::DenseGrid dense{grid.dims, {}};
    for (int a = 0; a < 3; ++a) dense.spacing_mm[a] = axis_spacing(grid.voxel_to_world, a);
    const std::vector<float> moving_gradient = dm::central_difference_gradient(dense, in.moving, execution);
    const dm::DenseCostInput input{dense, in.fixed, in.moving, in.mask, moving_gradient};
    std::vector<double> gradient(3 * voxel_count(grid.dims));
    double value = 0.0;
    switch (metric.kind) {
      case SynMetricKind::cc: value = dm::local_cc(input, metric.cc, gradient, execution); break;
      case SynMetricKind::mean_squares: value = dm::mean_squares(input, gradient, execution); break;
      case SynMetricKind::mattes: value = dm::mattes_mutual_information(input, metric.mattes, gradient, execution); break;
    }
    dm::grid_gradient_to_world(grid.voxel_to_world, gradient, gradient_world, execution);
    return value;
  };
}

MetricDescent metric_descent(const FieldGeometry& grid, std::span<const float> fixed, std::span<const float> moving,
                             std::span<const float> mask, const SynMetricFunction& metric, Execution execution) {
  MetricDescent out;
  out.direction = zero_field(grid);
  std::span<float> d(out.direction.vectors);
  out.value = metric(SynMetricInput{grid, fixed, moving, mask}, d);
  dense_metrics::for_each_slab(d.size(), execution, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) d[i] = -d[i];
  });
  return out;
}

MetricDescent metric_descent(const FieldGeometry& grid, std::span<const float> fixed, std::span<const float> moving,
                             const SynMetric& metric, Execution execution) {
  return metric_descent(grid, fixed, moving, {}, builtin_metric(metric, execution), execution);
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
