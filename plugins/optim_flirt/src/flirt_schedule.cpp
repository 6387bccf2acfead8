#include "flirt_schedule.hpp"

#include "initial_search.hpp"
#include "lockstep.hpp"
#include "search_space.hpp"
#include "stage_log.hpp"

#include <algorithm>
#include <string>

namespace regpipe::flirt {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Stage 2's scale perturbations (Jenkinson et al. 2002, section 4.3.2; Li & Kumar 2014, II.B).
constexpr double kScalePerturbations[] = {-0.2, -0.1, 0.1, 0.2};

// A local search of one DOF setting from one point: a pass of stages 3 and 4.
struct Pass {
  uint32_t level;
  unsigned dof;
};

// Each candidate, then its perturbations: +-half the fine step about each rotation axis, and
// when the scale is free the global scale changed by each of kScalePerturbations.
std::vector<Start> perturbed(const std::vector<Scored>& candidates, double fine_step_deg,
                             bool scale_free) {
  const double half_step = 0.5 * fine_step_deg * kPi / 180.0;
  std::vector<Start> starts;
  for (const Scored& c : candidates) {
    starts.push_back({c.x, {}});
    for (size_t a = 0; a < 3; ++a)
      for (double sign : {-1.0, 1.0}) {
        Point p = c.x;
        p[kRotation + a] += sign * half_step;
        starts.push_back({p, {}});
      }
    if (!scale_free) continue;
    for (double change : kScalePerturbations) {
      Point p = c.x;
      for (size_t a = 0; a < 3; ++a) p[kScale + a] += change;
      starts.push_back({p, {}});
    }
  }
  return starts;
}

Scored best_of(const std::vector<Scored>& results) {
  return *std::min_element(results.begin(), results.end(),
                           [](const Scored& a, const Scored& b) { return a.cost < b.cost; });
}

}  // namespace

LevelPlan plan_levels(uint32_t level_count) {
  const uint32_t finest = level_count - 1;
  LevelPlan plan;
  plan.initial = 0;
  plan.perturbation = std::min(1u, finest);
  plan.refinement = std::min(2u, finest);
  for (uint32_t level = 3; level < level_count; ++level) plan.final_passes.push_back(level);
  return plan;
}

Scored run_schedule(BatchObjective& objective, const rp_host* host, const FlirtSettings& settings,
                    const Point& start, unsigned dof, uint32_t level_count) {
  const LevelPlan plan = plan_levels(level_count);
  std::vector<Pass> passes;
  if (dof == 6) passes.push_back({plan.refinement, 6});
  for (unsigned d : {7u, 9u, 12u})
    if (d <= dof) passes.push_back({plan.refinement, d});
  for (uint32_t level : plan.final_passes) passes.push_back({level, dof});

  StageLog log(host, objective,
               initial_search_stages(settings) + 1 + static_cast<int>(passes.size()));
  const unsigned search_dof = std::min(dof, 7u);

  // Stage 1
  objective.set_level(plan.initial);
  const std::vector<Scored> candidates = initial_search(objective, log, settings, start, dof);

  // Stage 2 (costs are re-evaluated: this is another level, or the same one in a one-level
  // pipeline, where a second evaluation is the price of keeping the schedule simple).
  objective.set_level(plan.perturbation);
  const std::vector<Start> starts = perturbed(candidates, settings.fine_step_deg, dof >= 7);
  log.begin("perturbations", counted(starts.size(), "start") + ", " + dof_label(search_dof));
  Scored best =
      best_of(run_lockstep(objective, starts,
                           search_settings(search_dof, objective.typical_step(),
                                           settings.tolerance_voxels, settings.max_iterations)));
  log.end(best.cost);

  // Stages 3 and 4: one search per pass; the last pass uses the final tolerance.
  uint32_t level = plan.perturbation;
  for (size_t k = 0; k < passes.size(); ++k) {
    const Pass& pass = passes[k];
    Start from{best.x, best.cost};
    if (pass.level != level) {
      objective.set_level(pass.level);
      level = pass.level;
      from.cost.reset();
    }
    const bool final_pass = k + 1 == passes.size();
    LocalSearchSettings search = search_settings(
        pass.dof, objective.typical_step(),
        final_pass ? settings.final_tolerance_voxels : settings.tolerance_voxels,
        settings.max_iterations);
    search.adaptive_brackets = final_pass && settings.adaptive_brackets;
    log.begin(dof_label(pass.dof), "1 start");
    best = run_lockstep(objective, {from}, search, settings.speculate).front();
    log.end(best.cost);
  }
  return best;
}

}  // namespace regpipe::flirt
