// The optim.flirt component: checks the objective and runs FLIRT's schedule over all of the
// pipeline's levels in one minimize call (RP_OPTIMIZER_DRIVES_LEVELS).
#pragma once

#include "flirt_settings.hpp"

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>

namespace regpipe::flirt {

class FlirtOptimizer {
 public:
  FlirtOptimizer(const rp_host* host, const rp::Params& params)
      : host_(host), settings_(read_settings(params)) {}
  void minimize(const rp_objective& objective, double* x_inout, double* f_out);

 private:
  const rp_host* host_;
  FlirtSettings settings_;
};

}  // namespace regpipe::flirt
