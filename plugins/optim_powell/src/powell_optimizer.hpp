// The optim.powell component: checks the objective, sets up the free subspace of its DOF and
// the resolution cache, runs the direction-set search and reports what it cost.
#pragma once

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>

#include <string>

namespace regpipe::powell {

class PowellOptimizer {
 public:
  PowellOptimizer(const rp_host* host, const rp::Params& params);
  // Minimises at the objective's current level (the host selects it; flags are 0).
  void minimize(const rp_objective& objective, double* x_inout, double* f_out);

 private:
  void log(int32_t level, const std::string& message) const;
  void progress(const std::string& what) const;

  const rp_host* host_;
  int max_iterations_;
  double tolerance_;
  double resolution_rad_;    // rotations
  double resolution_mm_;     // translations
  double resolution_scale_;  // scales and skews
};

}  // namespace regpipe::powell
