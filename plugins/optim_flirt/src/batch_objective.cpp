#include "batch_objective.hpp"

#include <regpipe/plugin.hpp>

#include <cmath>

namespace regpipe::flirt {

std::vector<double> BatchObjective::evaluate(const std::vector<Point>& points) {
  std::vector<double> costs(points.size());
  if (points.empty()) return costs;
  // The objective reads k vectors of param_count doubles back to back.
  static_assert(sizeof(Point) == RP_PARAM_COUNT * sizeof(double));
  rp::check(objective_, objective_.evaluate(objective_.ctx, points.front().data(), points.size(),
                                            costs.data()));
  stage_evaluations_ += points.size();
  stage_calls_ += 1;
  for (size_t j = 0; j < costs.size(); ++j)
    if (!std::isfinite(costs[j]))
      throw rp::Error(RP_INTERNAL, "the objective returned a non-finite cost (" +
                                       std::to_string(costs[j]) + ") for point " +
                                       std::to_string(j) + " of a batch of " +
                                       std::to_string(costs.size()));
  return costs;
}

void BatchObjective::set_level(uint32_t level) {
  rp::check(objective_, objective_.set_level(objective_.ctx, level));
  level_ = level;
}

void BatchObjective::begin_stage(const std::string& name) {
  if (RP_HAS_MEMBER(&objective_, rp_objective, begin_stage) && objective_.begin_stage != nullptr)
    objective_.begin_stage(objective_.ctx, name.c_str());
  stage_evaluations_ = 0;
  stage_calls_ = 0;
}

}  // namespace regpipe::flirt
