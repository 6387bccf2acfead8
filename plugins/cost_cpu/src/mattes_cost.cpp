#include "mattes_cost.hpp"

namespace regpipe::cost_cpu {

MattesMetric::MattesMetric(const rp::Params& params) { options.bins = int(params.get_number(kParams.params, kParams.count, "bins")); }

}  // namespace regpipe::cost_cpu
