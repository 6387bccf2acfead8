#include "batch_objective.hpp"

#include <regpipe/plugin.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace regpipe::flirt {

std::vector<double> BatchObjective::evaluate(const std::vector<Point>& points) {
  if (!remember_) return points.empty() ? std::vector<double>{} : evaluate_new(points);
  // Each point's place among the level's evaluated points; those added by this call (from
  // `first_new` on, a point the call holds twice added once) go to the objective.
  if (evaluated_.size() + points.size() > EvaluatedPoints::kMaxPoints) evaluated_.clear();
  const size_t first_new = evaluated_.size();
  std::vector<Point> fresh;
  std::vector<size_t> place(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    place[i] = evaluated_.find(points[i]);
    if (place[i] != EvaluatedPoints::kNone) {
      ++stage_repeats_;
    } else {
      place[i] = evaluated_.add(points[i]);
      fresh.push_back(points[i]);
    }
  }
  if (!fresh.empty()) {
    std::vector<double> fresh_costs;
    try {
      fresh_costs = evaluate_new(fresh);
    } catch (...) {
      evaluated_.clear();  // no point without its cost may stay
      throw;
    }
    for (size_t j = 0; j < fresh.size(); ++j) evaluated_.cost(first_new + j) = fresh_costs[j];
  }
  std::vector<double> costs(points.size());
  for (size_t i = 0; i < points.size(); ++i) costs[i] = evaluated_.cost(place[i]);
  if (!memory_decided_ && !fresh.empty()) {
    memory_decided_ = true;
    remember_ = last_call_seconds_ >= kRememberFromSecondsPerPoint * double(fresh.size());
    if (!remember_) evaluated_.clear();
  }
  return costs;
}

std::vector<double> BatchObjective::evaluate_new(const std::vector<Point>& points) {
  std::vector<double> costs(points.size());
  // The objective reads k vectors of param_count doubles back to back.
  static_assert(sizeof(Point) == RP_PARAM_COUNT * sizeof(double));
  const auto begin = std::chrono::steady_clock::now();
  rp::check(objective_, objective_.evaluate(objective_.ctx, points.front().data(), points.size(),
                                            costs.data()));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  last_call_seconds_ = seconds;
  if (points.size() <= fastest_seconds_.size()) {
    double& fastest = fastest_seconds_[points.size() - 1];
    if (fastest == 0.0 || seconds < fastest) fastest = seconds;
  }
  if (points.size() == 1) ++one_point_calls_;
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
  evaluated_.clear();
  remember_ = true;
  memory_decided_ = false;
  fastest_seconds_.fill(0.0);
  one_point_calls_ = 0;
}

bool BatchObjective::extra_points_cheap() const {
  const double one = fastest_seconds_[0];
  if (one_point_calls_ < kOnePointCalls || one == 0.0) return false;
  for (size_t k = 2; k <= fastest_seconds_.size(); ++k) {
    const double t = fastest_seconds_[k - 1];
    if (t > 0.0 && t < (1.0 + kCheapExtraPoint * double(k - 1)) * one) return true;
  }
  return false;
}

void BatchObjective::begin_stage(const std::string& name) {
  if (RP_HAS_MEMBER(&objective_, rp_objective, begin_stage) && objective_.begin_stage != nullptr)
    objective_.begin_stage(objective_.ctx, name.c_str());
  stage_evaluations_ = 0;
  stage_calls_ = 0;
  stage_repeats_ = 0;
}

std::string BatchObjective::fastest_calls() const {
  std::string out;
  for (size_t k = 1; k <= fastest_seconds_.size(); ++k) {
    if (fastest_seconds_[k - 1] == 0.0) continue;
    char item[64];
    std::snprintf(item, sizeof item, "%s%zu point%s %.0f us", out.empty() ? "" : ", ", k,
                  k == 1 ? "" : "s", fastest_seconds_[k - 1] * 1e6);
    out += item;
  }
  return out;
}

}  // namespace regpipe::flirt
