#include "initial_search.hpp"

#include "lockstep.hpp"
#include "rotation_grid.hpp"
#include "search_space.hpp"

#include <algorithm>
#include <string>

namespace regpipe::flirt {
namespace {

RotationGrid make_grid(const FlirtSettings& s, double step_deg) {
  std::array<GridAxis, 3> axes;
  for (int a = 0; a < 3; ++a)
    axes[a] = s.nosearch ? make_axis(0.0, 0.0, step_deg)
                         : make_axis(s.search[a].min_deg, s.search[a].max_deg, step_deg);
  return RotationGrid(axes);
}

Point rotated(const Point& start, const Angles& offset) {
  Point p = start;
  for (int a = 0; a < 3; ++a) p[kRotation + a] += offset[a];
  return p;
}

double median(std::vector<double> v) {
  const auto middle = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), middle, v.end());
  return *middle;
}

double lowest(const std::vector<Scored>& results) {
  double best = results.front().cost;
  for (const Scored& r : results) best = std::min(best, r.cost);
  return best;
}

}  // namespace

int initial_search_stages(const FlirtSettings& settings) {
  return make_grid(settings, settings.coarse_step_deg).size() == 1 ? 2 : 3;
}

std::vector<Scored> initial_search(BatchObjective& objective, StageLog& log,
                                   const FlirtSettings& settings, const Point& start,
                                   unsigned dof) {
  const unsigned coarse_dof = dof >= 7 ? kTranslationsAndScale : 3;
  const unsigned candidate_dof = std::min(dof, 7u);

  // 1. Coarse grid: translations and scale optimised at every rotation.
  const RotationGrid coarse = make_grid(settings, settings.coarse_step_deg);
  std::vector<Start> coarse_starts;
  for (size_t i = 0; i < coarse.size(); ++i)
    coarse_starts.push_back({rotated(start, coarse.angles(i)), {}});
  log.begin("coarse search", counted(coarse.size(), "start") + ", " + dof_label(coarse_dof));
  const std::vector<Scored> coarse_results =
      run_lockstep(objective, coarse_starts,
                   search_settings(coarse_dof, objective.typical_step(), settings.tolerance_voxels,
                                   settings.max_iterations));
  log.end(lowest(coarse_results));

  std::vector<Start> candidates;
  if (coarse.size() == 1) {
    candidates.push_back({coarse_results.front().x, coarse_results.front().cost});
  } else {
    // 2. Fine grid: one evaluation per rotation, all in one call.
    std::vector<Vec3> coarse_translations;
    std::vector<double> coarse_scale_changes;
    for (const Scored& r : coarse_results) {
      coarse_translations.push_back(
          {r.x[kTranslation], r.x[kTranslation + 1], r.x[kTranslation + 2]});
      coarse_scale_changes.push_back(r.x[kScale] - start[kScale]);
    }
    const double scale_change = median(coarse_scale_changes);
    const RotationGrid fine = make_grid(settings, settings.fine_step_deg);
    std::vector<Point> fine_points;
    for (size_t i = 0; i < fine.size(); ++i) {
      Point p = rotated(start, fine.angles(i));
      const Vec3 t = coarse.interpolate(coarse_translations, fine.angles(i));
      for (int a = 0; a < 3; ++a) {
        p[kTranslation + a] = t[a];
        p[kScale + a] += scale_change;
      }
      fine_points.push_back(p);
    }
    log.begin("fine grid", counted(fine.size(), "rotation"));
    const std::vector<double> fine_costs = objective.evaluate(fine_points);
    log.end(*std::min_element(fine_costs.begin(), fine_costs.end()));

    const std::vector<size_t> minima = fine.local_minima(fine_costs);
    log.log(RP_LOG_INFO, "optim.flirt: the fine grid has " + std::to_string(minima.size()) +
                             " local minima; the best " +
                             std::to_string(std::min(kCandidates, minima.size())) +
                             " become candidates");
    for (size_t k = 0; k < minima.size() && k < kCandidates; ++k)
      candidates.push_back({fine_points[minima[k]], fine_costs[minima[k]]});
  }

  // 3. The candidates with rotations free.
  log.begin(dof_label(candidate_dof), counted(candidates.size(), "candidate"));
  std::vector<Scored> optimised =
      run_lockstep(objective, candidates,
                   search_settings(candidate_dof, objective.typical_step(),
                                   settings.tolerance_voxels, settings.max_iterations));
  std::stable_sort(optimised.begin(), optimised.end(),
                   [](const Scored& a, const Scored& b) { return a.cost < b.cost; });
  log.end(optimised.front().cost);
  return optimised;
}

}  // namespace regpipe::flirt
