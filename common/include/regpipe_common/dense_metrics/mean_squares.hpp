// Mean squares, ANTs' MeanSquares metric (ITK's MeanSquaresImageToImageMetricv4):
//   cost = (1 / W) sum_x w(x) (f(x) - m(x))^2,  W = sum w,
//   grad(x) = -(2 w(x) / W) (f(x) - m(x)) grad m(x)      (d cost / d u, dense_image.hpp).
// No weight at all (W = 0) gives measure_math's worst least-squares cost and a zero gradient.
#pragma once

#include <regpipe_common/dense_metrics/dense_image.hpp>
#include <regpipe_common/measure_math.hpp>

namespace regpipe_common::dense_metrics {

inline double mean_squares(const DenseCostInput& in, std::span<double> gradient_out = {},
                           Execution execution = Execution::parallel) {
  check_input(in, gradient_out);
  const std::size_t n = voxel_count(in.grid.dims);
  const double total_weight = ordered_sum(n, execution, [&](std::size_t i) { return weight_at(in, i); });
  if (!(total_weight > 0.0)) {
    if (!gradient_out.empty()) std::fill(gradient_out.begin(), gradient_out.end(), 0.0);
    return kWorstLeastSquaresCost;
  }
  const bool want_gradient = !gradient_out.empty();
  const double squares = ordered_sum(n, execution, [&](std::size_t i) {
    const double w = weight_at(in, i), d = double(in.fixed[i]) - double(in.moving[i]);
    if (want_gradient) {
      const double d_cost_d_m = -2.0 * w * d / total_weight;
      for (int a = 0; a < 3; ++a) gradient_out[3 * i + a] = d_cost_d_m * in.moving_gradient[3 * i + a];
    }
    return w * d * d;
  });
  return squares / total_weight;
}

}  // namespace regpipe_common::dense_metrics
