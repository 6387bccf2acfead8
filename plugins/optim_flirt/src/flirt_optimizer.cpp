#include "flirt_optimizer.hpp"

#include "batch_objective.hpp"
#include "flirt_schedule.hpp"
#include "point.hpp"

#include <string>

namespace regpipe::flirt {
namespace {

// On top of rp::check_objective: the dofs a rotation search makes sense for, and levels.
void check_flirt_objective(const rp_objective& objective, const double* x) {
  rp::check_objective(objective, x, "optim.flirt");
  const unsigned dof = objective.dof;
  if (dof != 6 && dof != 7 && dof != 9 && dof != 12)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "dof=" + std::to_string(dof) +
                        " is not supported by optim.flirt, whose search is over rotations: use "
                        "6, 7, 9 or 12 (optim.powell handles 3)");
  if (objective.level_count == 0 || objective.levels_mm == nullptr)
    throw rp::Error(RP_INVALID_ARGUMENT, "objective has no levels (level_count=" +
                                             std::to_string(objective.level_count) + ")");
}

}  // namespace

void FlirtOptimizer::minimize(const rp_objective& objective, double* x_inout, double* f_out) {
  check_flirt_objective(objective, x_inout);
  Point start;
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) start[i] = x_inout[i];
  BatchObjective batch(objective);
  const Scored result =
      run_schedule(batch, host_, settings_, start, objective.dof, objective.level_count);
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) x_inout[i] = result.x[i];
  *f_out = result.cost;
}

}  // namespace regpipe::flirt
