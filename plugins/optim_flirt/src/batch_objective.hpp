// The host's rp_objective as the search sees it: levels, stages for the report, and batched
// evaluation of points with the checks abi.h promises (finite costs), counted per stage so
// the plugin can log how well the stage batched.
#pragma once

#include "point.hpp"

#include <regpipe/abi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace regpipe::flirt {

class BatchObjective {
 public:
  // Keeps a reference to `objective`, which must outlive this object.
  explicit BatchObjective(const rp_objective& objective) : objective_(objective) {}

  // Costs of `points` in one objective call. Throws rp::Error with the objective's status
  // and message (RP_CANCELLED included), RP_INTERNAL for a non-finite cost.
  std::vector<double> evaluate(const std::vector<Point>& points);

  void set_level(uint32_t level);
  double level_mm() const { return objective_.levels_mm[level_]; }
  // Per parameter: a natural step at the current level (the host updates it in set_level).
  const double* typical_step() const { return objective_.typical_step; }

  // Opens a named stage in the host's report and restarts the per-stage counters.
  void begin_stage(const std::string& name);
  size_t stage_evaluations() const { return stage_evaluations_; }
  size_t stage_calls() const { return stage_calls_; }

 private:
  const rp_objective& objective_;
  uint32_t level_ = 0;
  size_t stage_evaluations_ = 0;
  size_t stage_calls_ = 0;
};

}  // namespace regpipe::flirt
