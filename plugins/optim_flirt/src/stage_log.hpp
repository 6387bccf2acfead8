// The named stages of the schedule as the host sees them: each opens a stage of the report
// (whose name carries the number of candidates, since the report counts evaluations, batches,
// best cost and seconds but not starts), advances the progress fraction, and on its end logs
// at info level how many candidates it ran and how well its evaluations batched.
#pragma once

#include "batch_objective.hpp"

#include <regpipe/abi.h>

#include <string>

namespace regpipe::flirt {

// "1 start", "64 starts": the candidate part of a stage name.
std::string counted(size_t n, const std::string& noun);

class StageLog {
 public:
  StageLog(const rp_host* host, BatchObjective& objective, int planned_stages)
      : host_(host), objective_(objective), planned_(planned_stages) {}

  // `what` is e.g. "coarse search", `candidates` e.g. "64 starts": the report shows
  // "8mm coarse search (64 starts)".
  void begin(const std::string& what, const std::string& candidates);
  void end(double best_cost);

  void log(int32_t level, const std::string& message) const;

 private:
  const rp_host* host_;
  BatchObjective& objective_;
  int planned_;
  int begun_ = 0;
  std::string name_;
};

}  // namespace regpipe::flirt
