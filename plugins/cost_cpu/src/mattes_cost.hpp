// cpu.mattes: ANTs' Mattes mutual information (MI[fixed, moving, 1, bins]: the Parzen-window
// joint histogram, a box window on the fixed image and a cubic B-spline on the moving one),
// regpipe_common::dense_metrics::mattes_mutual_information, as a WarpedDenseCost (the affine
// evaluate and RP_EXT_DENSE_COST with Mattes' analytic gradient for deformable optimizers).
#pragma once

#include "param_schema.hpp"
#include "warped_dense_cost.hpp"

#include <regpipe_common/dense_metrics/mattes_mi.hpp>

namespace regpipe::cost_cpu {

struct MattesMetric
    : MetricWithOptions<regpipe_common::dense_metrics::MattesOptions, &regpipe_common::dense_metrics::mattes_mutual_information> {
  static constexpr ParamList kParams = param_list(kMattesParams);
  explicit MattesMetric(const rp::Params& params);
};

using MattesCost = WarpedDenseCost<MattesMetric>;

}  // namespace regpipe::cost_cpu
