#include "local_cc_cost.hpp"

namespace regpipe::cost_cpu {

LocalCcMetric::LocalCcMetric(const rp::Params& params) {
  using namespace regpipe_common::dense_metrics;
  options.window.radius_voxels = std::size_t(params.get_number(kParams.params, kParams.count, "radius"));
  options.window.sigma_mm = params.get_number(kParams.params, kParams.count, "sigma_mm");
  options.window.shape = params.second_choice("window", "box", "gaussian") ? WindowShape::gaussian : WindowShape::box;
  options.gradient =
      params.second_choice("gradient", "ants", "exact") ? LccGradient::exact : LccGradient::ants_own_window;
}

}  // namespace regpipe::cost_cpu
