#include "flirt_optimizer.hpp"

#include "batch_objective.hpp"
#include "flirt_schedule.hpp"
#include "point.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace regpipe::flirt {
namespace {

std::string format(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check_objective(const rp_objective& objective, const double* x) {
  if (!RP_HAS_MEMBER(&objective, rp_objective, last_error))
    throw rp::Error(RP_INVALID_ARGUMENT, "objective size=" + std::to_string(objective.size) +
                                             " is too small for an ABI 1.0 rp_objective");
  if (objective.param_count != RP_PARAM_COUNT)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "objective param_count=" + std::to_string(objective.param_count) +
                        "; optim.flirt works on abi.h's " + std::to_string(RP_PARAM_COUNT) +
                        "-parameter affine");
  const unsigned dof = objective.dof;
  if (dof != 6 && dof != 7 && dof != 9 && dof != 12)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "dof=" + std::to_string(dof) +
                        " is not supported by optim.flirt, whose search is over rotations: use "
                        "6, 7, 9 or 12 (optim.powell handles 3)");
  if (objective.typical_step == nullptr)
    throw rp::Error(RP_INVALID_ARGUMENT, "objective typical_step is NULL");
  if (objective.level_count == 0 || objective.levels_mm == nullptr)
    throw rp::Error(RP_INVALID_ARGUMENT, "objective has no levels (level_count=" +
                                             std::to_string(objective.level_count) + ")");
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i)
    if (!std::isfinite(x[i]))
      throw rp::Error(RP_INVALID_ARGUMENT, "start point x[" + std::to_string(i) +
                                               "]=" + format(x[i]) + " is not finite");
}

}  // namespace

void FlirtOptimizer::minimize(const rp_objective& objective, double* x_inout, double* f_out) {
  check_objective(objective, x_inout);
  Point start;
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) start[i] = x_inout[i];
  BatchObjective batch(objective);
  const Scored result =
      run_schedule(batch, host_, settings_, start, objective.dof, objective.level_count);
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) x_inout[i] = result.x[i];
  *f_out = result.cost;
}

}  // namespace regpipe::flirt
