#include "local_cc_cost.hpp"

#include "dense_params.hpp"

namespace regpipe::cost_cpu {

LocalCcMetric::LocalCcMetric(const rp::Params& params) {
  using namespace regpipe_common::dense_metrics;
  options.window.radius_voxels = std::size_t(checked_number(params, kParams, "radius"));
  options.window.sigma_mm = checked_number(params, kParams, "sigma_mm");
  options.window.shape = second_choice(params, "window", "box", "gaussian") ? WindowShape::gaussian : WindowShape::box;
  options.gradient =
      second_choice(params, "gradient", "ants", "exact") ? LccGradient::exact : LccGradient::ants_own_window;
}

}  // namespace regpipe::cost_cpu
