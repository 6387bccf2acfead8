#include "mattes_cost.hpp"

#include "dense_params.hpp"

namespace regpipe::cost_cpu {

MattesMetric::MattesMetric(const rp::Params& params) { options.bins = int(checked_number(params, kParams, "bins")); }

}  // namespace regpipe::cost_cpu
