// The host's rp_objective as the search sees it: levels, stages for the report, and batched
// evaluation of points with the checks abi.h promises (finite costs), counted per stage so
// the plugin can log how well the stage batched, and timed per batch size at the current level
// so the search can tell whether extra points in a call are cheap (speculation). Points
// already evaluated at the current level are answered from memory (evaluated_points.hpp)
// where a point costs enough for that to pay.
#pragma once

#include "evaluated_points.hpp"
#include "point.hpp"

#include <regpipe/abi.h>

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace regpipe::flirt {

class BatchObjective {
 public:
  // Keeps a reference to `objective`, which must outlive this object.
  explicit BatchObjective(const rp_objective& objective) : objective_(objective) {}

  // Costs of `points`: those not yet evaluated at this level in one objective call (none
  // when every point is known). Throws rp::Error with the objective's status and message
  // (RP_CANCELLED included), RP_INTERNAL for a non-finite cost.
  std::vector<double> evaluate(const std::vector<Point>& points);

  // Points are remembered at a level whose first call took at least this long a point. A
  // lookup and an insert cost 0.05-0.3 us (the most while the memory's pages are first
  // touched): that pays on a CPU (cpu.cr, 2 cores: about 45 us a point at 8 mm), not in a
  // GPU's batches (cuda.cr on an H200: 1-3 us a point at 8 and 4 mm, where leaving a point
  // out of a call saves little more than that, and the memory made the registration 3.5 %
  // slower), and again in its one-search stages (30-60 us a point at 2 and 1 mm).
  static constexpr double kRememberFromSecondsPerPoint = 10e-6;

  // Selects a level; the timings and the evaluated points start afresh.
  void set_level(uint32_t level);
  double level_mm() const { return objective_.levels_mm[level_]; }
  // Per parameter: a natural step at the current level (the host updates it in set_level).
  const double* typical_step() const { return objective_.typical_step; }

  // Opens a named stage in the host's report and restarts the per-stage counters.
  void begin_stage(const std::string& name);
  // Points the objective evaluated, its calls, and the points answered from memory instead.
  size_t stage_evaluations() const { return stage_evaluations_; }
  size_t stage_calls() const { return stage_calls_; }
  size_t stage_repeats() const { return stage_repeats_; }

  // Whether, at the current level, a call of k > 1 points has taken less than
  // 1 + kCheapExtraPoint (k - 1) times the fastest one-point call (fastest calls of each size,
  // so a first call's set-up does not count): a GPU's, not a CPU's. False until a multi-point
  // call and kOnePointCalls one-point calls are timed (one slow one must not switch it on).
  // Speculation trades about 0.6 times the calls for 2.2 times the points a call
  // (docs/flirt-search.md), so it pays while a point costs less than the call around it; a
  // third of a one-point call leaves a margin.
  bool extra_points_cheap() const;
  static constexpr double kCheapExtraPoint = 1.0 / 3.0;
  static constexpr size_t kOnePointCalls = 3;
  // "1 point 85 us, 2 points 92 us": the fastest call of each size at this level, for the log.
  std::string fastest_calls() const;

 private:
  // Costs of `points`, none known, in one timed objective call.
  std::vector<double> evaluate_new(const std::vector<Point>& points);

  const rp_objective& objective_;
  uint32_t level_ = 0;
  size_t stage_evaluations_ = 0;
  size_t stage_calls_ = 0;
  size_t stage_repeats_ = 0;
  EvaluatedPoints evaluated_;
  bool remember_ = true;           // this level's points (until its first call says otherwise)
  bool memory_decided_ = false;    // by this level's first call
  double last_call_seconds_ = 0.0;
  // Fastest call at this level by number of points (index k - 1); 0 where none yet.
  std::array<double, 8> fastest_seconds_{};
  size_t one_point_calls_ = 0;  // timed at this level
};

}  // namespace regpipe::flirt
