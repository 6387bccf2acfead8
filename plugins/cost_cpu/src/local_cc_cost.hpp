// cpu.lcc: ANTs' neighbourhood cross-correlation (CC[fixed, moving, 1, radius]),
// regpipe_common::dense_metrics::local_cc, as a WarpedDenseCost (the affine evaluate and
// RP_EXT_DENSE_COST with its gradient for deformable optimizers).
#pragma once

#include "param_schema.hpp"
#include "warped_dense_cost.hpp"

#include <regpipe_common/dense_metrics/local_cc.hpp>

namespace regpipe::cost_cpu {

struct LocalCcMetric
    : MetricWithOptions<regpipe_common::dense_metrics::LocalCcOptions, &regpipe_common::dense_metrics::local_cc> {
  static constexpr ParamList kParams = param_list(kLocalCcParams);
  explicit LocalCcMetric(const rp::Params& params);
};

using LocalCcCost = WarpedDenseCost<LocalCcMetric>;

}  // namespace regpipe::cost_cpu
