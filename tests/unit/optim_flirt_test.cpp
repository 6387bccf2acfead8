// optim.flirt through the host API on synthetic objectives: it finds a large rotation that a
// local search from the identity misses, sends its independent searches in large batches,
// follows FLIRT's schedule over the levels, never moves parameters outside the DOF, refuses
// bad settings with specific messages and propagates cancellation.
#include "support/test_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/pipeline.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using Params = std::array<double, RP_PARAM_COUNT>;
using Matrix3 = std::array<std::array<double, 3>, 3>;

constexpr double kPi = 3.14159265358979323846;
constexpr double kDeg = kPi / 180.0;
constexpr Params kIdentity = {0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0};
constexpr double kRadiusMm = 60.0;  // the lever arm the host would measure on a head

// R = Rz * Ry * Rx (abi.h).
Matrix3 rotation(const Params& p) {
  const double cx = std::cos(p[0]), sx = std::sin(p[0]), cy = std::cos(p[1]), sy = std::sin(p[1]),
               cz = std::cos(p[2]), sz = std::sin(p[2]);
  return {{{cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx},
           {sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx},
           {-sy, cy * sx, cy * cx}}};
}

// Rotation of `angle` about `axis` (Rodrigues).
Matrix3 axis_angle(std::array<double, 3> axis, double angle) {
  const double n = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  for (double& a : axis) a /= n;
  const double c = std::cos(angle), s = std::sin(angle), t = 1.0 - c;
  const auto [x, y, z] = axis;
  return {{{t * x * x + c, t * x * y - s * z, t * x * z + s * y},
           {t * x * y + s * z, t * y * y + c, t * y * z - s * x},
           {t * x * z - s * y, t * y * z + s * x, t * z * z + c}}};
}

// The angle of the rotation between a and b, in degrees.
double angle_between_deg(const Matrix3& a, const Matrix3& b) {
  double trace = 0.0;  // trace(a^T b)
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) trace += a[i][j] * b[i][j];
  return std::acos(std::clamp((trace - 1.0) / 2.0, -1.0, 1.0)) / kDeg;
}

// A cost with many local minima over rotations and its global minimum at a large one:
// 70 degrees about the oblique axis (2, -1, 1) (Euler angles about 55.5, -37.1, 11.9
// degrees, inside FLIRT's default search range), a 37 mm shift and a 5 % scale. Over the
// angle theta to that rotation the cost is a smooth bowl theta^2 / (theta^2 + 40deg^2) with
// ripples of period 20 degrees beyond 30 degrees: shells of local minima around the global
// basin, as an image cost has around the true alignment. Translations, scales and skews add
// a quadratic bowl centred on the target.
struct RippledRotationCost {
  Matrix3 target_rotation = axis_angle({2, -1, 1}, 70 * kDeg);
  Params target = {0, 0, 0, 30, -20, 10, 1.05, 1.05, 1.05, 0, 0, 0};

  double operator()(const Params& p) const {
    const double theta = angle_between_deg(rotation(p), target_rotation);
    const double bowl = theta * theta / (theta * theta + 40.0 * 40.0);
    const double onset = std::clamp((theta - 20.0) / 10.0, 0.0, 1.0);  // no ripples below 20 deg
    const double ripple = 0.1 * onset * 0.5 * (1.0 - std::cos(2.0 * kPi * theta / 20.0));
    double rest = 0.0;
    for (size_t i = 3; i < 6; ++i) rest += std::pow((p[i] - target[i]) / 20.0, 2);
    for (size_t i = 6; i < 12; ++i) rest += std::pow((p[i] - target[i]) / 0.2, 2);
    return bowl + ripple + rest;
  }
  double rotation_error_deg(const Params& p) const {
    return angle_between_deg(rotation(p), target_rotation);
  }
};

// An rp_objective with FLIRT's levels around a cost function. It records every batch with the
// stage it belongs to, the levels selected and the stage names, and updates typical_step per
// level as the host does (translations: the level's mm; the rest: mm over the radius).
class StagedObjective {
 public:
  StagedObjective(uint32_t dof, std::function<double(const Params&)> cost,
                  std::vector<double> levels_mm = {8, 4, 2, 1})
      : cost_(std::move(cost)), levels_mm_(std::move(levels_mm)) {
    objective_.size = sizeof(objective_);
    objective_.ctx = this;
    objective_.param_count = RP_PARAM_COUNT;
    objective_.dof = dof;
    objective_.typical_step = typical_step_.data();
    objective_.level_count = static_cast<uint32_t>(levels_mm_.size());
    objective_.levels_mm = levels_mm_.data();
    objective_.evaluate = &StagedObjective::evaluate;
    objective_.set_level = [](void* ctx, uint32_t level) -> rp_status {
      static_cast<StagedObjective*>(ctx)->select(level);
      return RP_OK;
    };
    objective_.last_error = [](void* ctx) -> const char* {
      return static_cast<StagedObjective*>(ctx)->last_error_.c_str();
    };
    objective_.begin_stage = [](void* ctx, const char* name) {
      static_cast<StagedObjective*>(ctx)->stages_.push_back(name);
    };
    select(0);
    levels_.clear();
  }

  rp_objective& abi() { return objective_; }
  void select(uint32_t level) {
    levels_.push_back(level);
    const double mm = levels_mm_[level];
    for (size_t i = 0; i < RP_PARAM_COUNT; ++i)
      typical_step_[i] = i >= 3 && i < 6 ? mm : mm / kRadiusMm;
  }
  const std::vector<uint32_t>& levels() const { return levels_; }
  const std::vector<std::string>& stages() const { return stages_; }
  // Batch sizes and points of the stage whose name starts with `prefix`.
  std::vector<size_t> batches(const std::string& prefix) const {
    return select_stage(prefix, batches_);
  }
  std::vector<Params> points(const std::string& prefix) const {
    std::vector<Params> out;
    for (const auto& [stage, p] : points_)
      if (stage.rfind(prefix, 0) == 0) out.push_back(p);
    return out;
  }
  const std::vector<std::pair<std::string, Params>>& all_points() const { return points_; }
  size_t calls() const { return calls_; }
  void cancel_from_call(size_t call) { cancel_from_call_ = call; }
  // Makes each call at `level` take per_call + k per_point (a GPU's or a CPU's price).
  void set_call_time(uint32_t level, std::chrono::microseconds per_call,
                     std::chrono::microseconds per_point) {
    timed_level_ = level;
    per_call_ = per_call;
    per_point_ = per_point;
  }
  // Makes each call at every level take k every_point more (a CPU's price everywhere).
  void set_point_time(std::chrono::microseconds every_point) { every_point_ = every_point; }

 private:
  static rp_status evaluate(void* ctx, const double* params, size_t k, double* costs) {
    auto* self = static_cast<StagedObjective*>(ctx);
    if (self->calls_ >= self->cancel_from_call_) {
      self->last_error_ = "cancelled by the test";
      return RP_CANCELLED;
    }
    ++self->calls_;
    if (self->levels_.back() == self->timed_level_)
      std::this_thread::sleep_for(self->per_call_ + static_cast<int>(k) * self->per_point_);
    std::this_thread::sleep_for(static_cast<int>(k) * self->every_point_);
    const std::string stage = self->stages_.empty() ? "" : self->stages_.back();
    self->batches_.emplace_back(stage, k);
    for (size_t j = 0; j < k; ++j) {
      Params p;
      std::copy_n(params + j * RP_PARAM_COUNT, RP_PARAM_COUNT, p.begin());
      self->points_.emplace_back(stage, p);
      costs[j] = self->cost_(p);
    }
    return RP_OK;
  }
  std::vector<size_t> select_stage(const std::string& prefix,
                                   const std::vector<std::pair<std::string, size_t>>& all) const {
    std::vector<size_t> out;
    for (const auto& [stage, k] : all)
      if (stage.rfind(prefix, 0) == 0) out.push_back(k);
    return out;
  }

  std::function<double(const Params&)> cost_;
  std::vector<double> levels_mm_;
  Params typical_step_{};
  rp_objective objective_{};
  std::string last_error_;
  std::vector<uint32_t> levels_;
  std::vector<std::string> stages_;
  std::vector<std::pair<std::string, size_t>> batches_;
  std::vector<std::pair<std::string, Params>> points_;
  size_t calls_ = 0;
  size_t cancel_from_call_ = SIZE_MAX;
  uint32_t timed_level_ = UINT32_MAX;
  std::chrono::microseconds per_call_{0}, per_point_{0}, every_point_{0};
};

const regpipe::PluginHost& plugins() {
  static regpipe::PluginHost host({{regpipe::test::plugin_dir()}, false, false});
  return host;
}
const regpipe::Component& flirt() { return plugins().require(RP_KIND_OPTIMIZER, "optim.flirt"); }

// The rotations of the 8 mm fine grid (every `step_deg` from `from_deg` on each axis) that
// optim.flirt evaluated: in the fine grid's call, or before it in the coarse search (whose
// results at a grid rotation the call then leaves out: evaluated_points.hpp).
std::set<std::array<double, 3>> fine_grid_rotations(const StagedObjective& objective,
                                                    double from_deg, double step_deg) {
  std::set<std::array<double, 3>> rotations;
  for (const auto& [stage, p] : objective.all_points()) {
    if (stage.rfind("8mm coarse search", 0) != 0 && stage.rfind("8mm fine grid", 0) != 0) continue;
    bool on_grid = true;
    for (size_t a = 0; a < 3; ++a) {
      const double steps = (p[a] / kDeg - from_deg) / step_deg;
      on_grid = on_grid && std::fabs(steps - std::round(steps)) < 1e-6;
    }
    if (on_grid) rotations.insert({p[0], p[1], p[2]});
  }
  return rotations;
}

// Runs optim.flirt (which drives the levels itself) from `x` (updated); returns the cost.
double minimize_flirt(StagedObjective& objective, Params& x,
                      const std::map<std::string, std::string>& params = {}) {
  regpipe::HostServices services;
  regpipe::OptimizerInstance optimizer(flirt(), services, regpipe::resolve_params(flirt(), params));
  EXPECT_TRUE(optimizer.drives_levels());
  double f = 0.0;
  optimizer.minimize(objective.abi(), x.data(), &f);
  return f;
}

// Runs optim.powell as the host does: each level in turn, coarsest first.
double minimize_powell(StagedObjective& objective, Params& x) {
  const regpipe::Component& powell = plugins().require(RP_KIND_OPTIMIZER, "optim.powell");
  regpipe::HostServices services;
  regpipe::OptimizerInstance optimizer(powell, services, regpipe::resolve_params(powell, {}));
  double f = 0.0;
  for (uint32_t level = 0; level < objective.abi().level_count; ++level) {
    objective.select(level);
    optimizer.minimize(objective.abi(), x.data(), &f);
  }
  return f;
}

double mean(const std::vector<size_t>& v) {
  double sum = 0.0;
  for (size_t k : v) sum += double(k);
  return v.empty() ? 0.0 : sum / double(v.size());
}

bool is_free(uint32_t dof, size_t i) {
  if (i < 3) return dof >= 6;
  if (i < 6) return true;
  if (i < 9) return dof >= 7;
  return dof == 12;
}

// The status and message of the ComponentError that `body` must throw.
template <class Body>
std::pair<rp_status, std::string> component_error(Body&& body) {
  try {
    body();
  } catch (const regpipe::ComponentError& e) {
    return {e.status(), e.what()};
  }
  return {RP_OK, "no error"};
}

// The error `create` gives for the default parameters changed by `change`, handed straight to
// it past the host's validation.
template <class Change>
std::pair<rp_status, std::string> create_error(Change&& change) {
  auto params = regpipe::resolve_params(flirt(), {});
  change(params);
  return component_error([&] {
    regpipe::HostServices services;
    regpipe::OptimizerInstance optimizer(flirt(), services, params);
  });
}

TEST(OptimFlirt, FindsALargeRotationThatPowellFromIdentityMisses) {
  const RippledRotationCost cost;
  StagedObjective flirt_objective(12, cost);
  Params x = kIdentity;
  const double f = minimize_flirt(flirt_objective, x);

  StagedObjective powell_objective(12, cost);
  Params y = kIdentity;
  const double g = minimize_powell(powell_objective, y);

  std::printf("start: %.1f degrees from the target rotation\n", cost.rotation_error_deg(kIdentity));
  std::printf("optim.flirt:  %.3f degrees off, cost %.6f, %zu evaluations\n",
              cost.rotation_error_deg(x), f, flirt_objective.all_points().size());
  std::printf("optim.powell: %.3f degrees off, cost %.6f, %zu evaluations\n",
              cost.rotation_error_deg(y), g, powell_objective.all_points().size());

  EXPECT_LT(cost.rotation_error_deg(x), 0.5);
  for (size_t i = 3; i < 6; ++i) EXPECT_NEAR(x[i], cost.target[i], 0.2) << "translation " << i;
  for (size_t i = 6; i < 12; ++i) EXPECT_NEAR(x[i], cost.target[i], 0.005) << "parameter " << i;
  EXPECT_EQ(f, cost(x)) << "the reported cost must be the cost of the returned point";
  // The negative control: a local search from the identity stays in the ripples.
  EXPECT_GT(cost.rotation_error_deg(y), 20.0);
}

TEST(OptimFlirt, NoSearchStartsFromTheInitialOrientationOnly) {
  // nosearch (FLIRT -nosearch): one coarse search at the start's rotation, no fine grid, and
  // the perturbations of that one candidate.
  StagedObjective objective(12, RippledRotationCost{});
  Params x = kIdentity;
  x[2] = 0.3;
  const Params start = x;
  minimize_flirt(objective, x, {{"nosearch", "true"}});
  EXPECT_EQ(std::vector<std::string>(objective.stages().begin(), objective.stages().begin() + 3),
            (std::vector<std::string>{"8mm coarse search (1 start, 4dof)", "8mm 7dof (1 candidate)",
                                      "4mm perturbations (11 starts, 7dof)"}));
  for (const Params& p : objective.points("8mm coarse search"))
    for (size_t i = 0; i < 3; ++i) ASSERT_EQ(p[i], start[i]) << "rotation " << i;
}

TEST(OptimFlirt, IndependentSearchesGoOutInLargeBatches) {
  StagedObjective objective(12, RippledRotationCost{});
  Params x = kIdentity;
  minimize_flirt(objective, x);

  // Default range -90..90 in 60 degree steps: 4 angles per axis, 64 starts advancing in
  // lockstep. Searches end after different numbers of rounds, so late rounds are smaller;
  // without lockstep every batch would hold 1 to 3 points.
  const std::vector<size_t> coarse = objective.batches("8mm coarse search");
  ASSERT_FALSE(coarse.empty());
  std::printf("8mm coarse search: %zu calls, mean batch %.1f, first batch %zu\n", coarse.size(),
              mean(coarse), coarse.front());
  EXPECT_EQ(coarse.front(), 64u * 3u) << "each start's cost and first bracket in the first call";
  EXPECT_GE(mean(coarse), 64.0 / 2.0);

  // The fine grid: 11 angles per axis (18 degree steps), all in one call.
  EXPECT_EQ(objective.batches("8mm fine grid").size(), 1u);
  EXPECT_EQ(fine_grid_rotations(objective, -90.0, 18.0).size(), 11u * 11u * 11u);

  // 3 candidates x (itself + 6 rotation + 4 scale perturbations) in lockstep.
  const std::vector<size_t> perturbations = objective.batches("4mm perturbations");
  std::printf("4mm perturbations: %zu calls, mean batch %.1f\n", perturbations.size(),
              mean(perturbations));
  EXPECT_EQ(perturbations.front(), 33u * 3u);
  EXPECT_GE(mean(perturbations), 33.0 / 2.0);
}

TEST(OptimFlirt, AFullTurnSearchHasThePapersGridSizes) {
  // Li & Kumar (2014, II.B) and Jenkinson et al. (2002): 6^3 = 216 coarse starts and
  // 20^3 = 8000 fine rotations when the search covers the full turn.
  StagedObjective objective(7, RippledRotationCost{});
  Params x = kIdentity;
  std::map<std::string, std::string> full_turn;
  for (const char* axis : {"rx", "ry", "rz"}) {
    full_turn[std::string("search") + axis + "_min_deg"] = "-180";
    full_turn[std::string("search") + axis + "_max_deg"] = "180";
  }
  minimize_flirt(objective, x, full_turn);
  std::set<std::array<double, 3>> rotations;
  for (const Params& p : objective.points("8mm coarse search"))
    rotations.insert({p[0], p[1], p[2]});
  EXPECT_EQ(rotations.size(), 216u) << "the coarse searches keep their rotation fixed";
  EXPECT_EQ(objective.batches("8mm fine grid").size(), 1u);
  EXPECT_EQ(fine_grid_rotations(objective, -180.0, 18.0).size(), 8000u);
}

TEST(OptimFlirt, AdaptiveBracketsSaveFinalPassEvaluationsAndKeepItsResult) {
  // adaptive_brackets (default): after the final pass's first sweep each direction's line
  // brackets three times its last move and ends once a convex parabola places its minimum
  // within a quarter of the tolerance. Against +-1 step brackets and Brent to the tolerance
  // throughout (false, the search before issue 17's change): every earlier stage visits the
  // same points, the 1 mm pass takes at most 0.8 times the evaluations (91 against 125 when
  // written) and ends on the target as closely (0.02 voxel tolerance: 0.02 mm of
  // translation, 0.02 mm / 60 mm of scale and skew).
  const RippledRotationCost cost;
  StagedObjective adaptive(12, cost), fixed(12, cost);
  Params x = kIdentity, y = kIdentity;
  const double f = minimize_flirt(adaptive, x, {{"speculate", "off"}});
  const double g =
      minimize_flirt(fixed, y, {{"speculate", "off"}, {"adaptive_brackets", "false"}});
  ASSERT_EQ(adaptive.stages(), fixed.stages());
  const std::string last = adaptive.stages().back();
  for (const std::string& stage : adaptive.stages())
    if (stage != last) EXPECT_EQ(adaptive.points(stage), fixed.points(stage)) << stage;

  const size_t n = adaptive.points(last).size(), m = fixed.points(last).size();
  std::printf("%s: %zu evaluations (cost %.3g, %.4f degrees off) against %zu (cost %.3g, %.4f "
              "degrees off) with +-1 brackets\n",
              last.c_str(), n, f, cost.rotation_error_deg(x), m, g, cost.rotation_error_deg(y));
  EXPECT_LE(double(n), 0.8 * double(m));
  EXPECT_LT(cost.rotation_error_deg(x), 0.05);
  for (size_t i = 3; i < 6; ++i) EXPECT_NEAR(x[i], cost.target[i], 0.05) << "translation " << i;
  for (size_t i = 6; i < 12; ++i) EXPECT_NEAR(x[i], cost.target[i], 0.001) << "parameter " << i;
}

// The points the objective evaluated more than once at one level (stage names start with their
// level), and all it evaluated.
std::pair<size_t, size_t> repeated_points(const StagedObjective& objective) {
  std::set<std::pair<std::string, std::string>> seen;  // level, the point's bits
  size_t repeats = 0;
  for (const auto& [stage, p] : objective.all_points()) {
    const std::string bits(reinterpret_cast<const char*>(p.data()), sizeof p);
    if (!seen.emplace(stage.substr(0, stage.find(' ')), bits).second) ++repeats;
  }
  return {repeats, objective.all_points().size()};
}

TEST(OptimFlirt, EvaluatesNoPointTwiceAtALevelWherePointsCost) {
  // The search comes back to points it has had (a stage starts where the last one ended, a
  // bracket returns to its start); at one level their costs are known, so where a point costs
  // a CPU's time (12 us here, above kRememberFromSecondsPerPoint) the objective sees each
  // point once a level (evaluated_points.hpp), and the search ends where it did.
  const RippledRotationCost cost;
  StagedObjective costly(12, cost), cheap(12, cost);
  costly.set_point_time(std::chrono::microseconds(12));
  Params x = kIdentity, y = kIdentity;
  // Without speculation: auto would speculate where calls are cheap, and evaluate other points.
  minimize_flirt(costly, x, {{"speculate", "off"}});
  minimize_flirt(cheap, y, {{"speculate", "off"}});
  const auto [repeats, points] = repeated_points(costly);
  EXPECT_EQ(repeats, 0u) << "of " << points << " points";
  EXPECT_EQ(x, y) << "the same search, bit for bit";
  EXPECT_LT(cost.rotation_error_deg(x), 0.05);
  // Where a point costs next to nothing (a GPU's batches), looking it up is not worth it: the
  // repeats go to the objective again.
  const auto [cheap_repeats, cheap_points] = repeated_points(cheap);
  std::printf("repeated points: %zu of %zu evaluated with 12 us a point, %zu of %zu with none\n",
              repeats, points, cheap_repeats, cheap_points);
  EXPECT_GT(cheap_repeats, 0u);
  EXPECT_EQ(cheap_points - cheap_repeats, points);
}

TEST(OptimFlirt, StagesFollowFlirtsScheduleOverTheLevels) {
  StagedObjective objective(12, RippledRotationCost{});
  Params x = kIdentity;
  minimize_flirt(objective, x);
  EXPECT_EQ(objective.levels(), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(
      objective.stages(),
      (std::vector<std::string>{
          "8mm coarse search (64 starts, 4dof)", "8mm fine grid (1331 rotations)",
          "8mm 7dof (3 candidates)", "4mm perturbations (33 starts, 7dof)", "2mm 7dof (1 start)",
          "2mm 9dof (1 start)", "2mm 12dof (1 start)", "1mm 12dof (1 start)"}));
}

TEST(OptimFlirt, WithThreeLevelsTheTwoMillimetreStageIsTheLast) {
  StagedObjective objective(9, RippledRotationCost{}, {8, 4, 2});
  Params x = kIdentity;
  minimize_flirt(objective, x);
  EXPECT_EQ(objective.levels(), (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(objective.stages().back(), "2mm 9dof (1 start)");
}

TEST(OptimFlirt, RigidSearchKeepsTheScaleAtOne) {
  StagedObjective objective(6, RippledRotationCost{});
  Params x = kIdentity;
  minimize_flirt(objective, x);
  EXPECT_EQ(objective.stages(),
            (std::vector<std::string>{"8mm coarse search (64 starts, 3dof)",
                                      "8mm fine grid (1331 rotations)", "8mm 6dof (3 candidates)",
                                      "4mm perturbations (21 starts, 6dof)", "2mm 6dof (1 start)",
                                      "1mm 6dof (1 start)"}));
}

// Whether `sub` occurs in `all` in order (not necessarily contiguously).
bool is_subsequence(const std::vector<Params>& sub, const std::vector<Params>& all) {
  size_t j = 0;
  for (const Params& p : all)
    if (j < sub.size() && p == sub[j]) ++j;
  return j == sub.size();
}

TEST(OptimFlirt, SpeculationSavesCallsWithoutChangingAnySearchsPath) {
  // speculate=on sends, with each point of a single-search stage, the points the search asks
  // for next under each outcome whose next request does not depend on the cost's value; a
  // request they cover needs no call. Every point the search visits without speculation is
  // then evaluated with it too, in the same order, and the result is the same bit for bit.
  const RippledRotationCost cost;
  StagedObjective plain(12, cost), speculative(12, cost);
  Params x = kIdentity, y = kIdentity;
  const double f = minimize_flirt(plain, x, {{"speculate", "off"}});
  const double g = minimize_flirt(speculative, y, {{"speculate", "on"}});
  EXPECT_EQ(x, y);
  EXPECT_EQ(f, g);
  ASSERT_EQ(plain.stages(), speculative.stages());

  for (const std::string& stage : plain.stages()) {
    const std::vector<size_t> off = plain.batches(stage), on = speculative.batches(stage);
    std::printf("%-36s off: %3zu calls %4zu evaluations   on: %3zu calls %4zu evaluations\n",
                stage.c_str(), off.size(), plain.points(stage).size(), on.size(),
                speculative.points(stage).size());
    EXPECT_TRUE(is_subsequence(plain.points(stage), speculative.points(stage))) << stage;
    if (stage.find("(1 start)") == std::string::npos) {
      EXPECT_EQ(off, on) << stage << ": stages of several searches do not speculate";
    } else {
      EXPECT_LT(double(on.size()), 0.8 * double(off.size())) << stage;
    }
  }
}

TEST(OptimFlirt, SpeculationAutoFollowsWhatAPointCosts) {
  // auto speculates at a level where a call of several points is timed at under 1 + (k-1)/3
  // times a call of one: at 2 mm, 4 ms a call whatever its size (a GPU's price) against 4 ms a
  // point (a CPU's). Either way the result is the one without speculation. (`plain` is timed
  // as a CPU too, so that it remembers the points of its 2 mm level as the others do.)
  using std::chrono::microseconds;
  const RippledRotationCost cost;
  StagedObjective plain(9, cost, {8, 4, 2}), gpu_like(9, cost, {8, 4, 2}),
      cpu_like(9, cost, {8, 4, 2});
  plain.set_call_time(2, microseconds(0), microseconds(4000));
  gpu_like.set_call_time(2, microseconds(4000), microseconds(0));
  cpu_like.set_call_time(2, microseconds(0), microseconds(4000));
  Params x = kIdentity, y = kIdentity, z = kIdentity;
  minimize_flirt(plain, x, {{"speculate", "off"}});
  minimize_flirt(gpu_like, y);
  minimize_flirt(cpu_like, z);
  EXPECT_EQ(x, y);
  EXPECT_EQ(x, z);
  for (const char* stage : {"2mm 7dof", "2mm 9dof"}) {
    EXPECT_EQ(cpu_like.batches(stage), plain.batches(stage)) << stage;
    EXPECT_LT(gpu_like.batches(stage).size(), plain.batches(stage).size()) << stage;
  }
}

TEST(OptimFlirtValidation, RefusesAnUnknownSpeculationMode) {
  EXPECT_THROW(regpipe::resolve_params(flirt(), {{"speculate", "sometimes"}}), regpipe::UserError);
  // Past the host's validation, create refuses it too.
  const auto [status, message] =
      create_error([](auto& params) { params["speculate"].string_value = "sometimes"; });
  EXPECT_EQ(status, RP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("speculate=sometimes is not one of auto, on, off"), std::string::npos)
      << message;
}

class FlirtDof : public ::testing::TestWithParam<uint32_t> {};

TEST_P(FlirtDof, NeverMovesParametersOutsideTheDof) {
  const uint32_t dof = GetParam();
  StagedObjective objective(dof, RippledRotationCost{});
  const Params start = {0, 0, 0, 1, 2, 3, 0.98, 0.98, 0.98, 0.01, -0.02, 0.03};
  Params x = start;
  minimize_flirt(objective, x);
  ASSERT_FALSE(objective.all_points().empty());
  for (const auto& [stage, p] : objective.all_points()) {
    for (size_t i = 0; i < RP_PARAM_COUNT; ++i)
      if (!is_free(dof, i)) ASSERT_EQ(p[i], start[i]) << "parameter " << i << " in " << stage;
    if (dof == 7) {
      ASSERT_EQ(p[6], p[7]) << stage;
      ASSERT_EQ(p[7], p[8]) << stage;
    }
  }
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i)
    if (!is_free(dof, i)) EXPECT_EQ(x[i], start[i]) << "parameter " << i;
}

INSTANTIATE_TEST_SUITE_P(Dof, FlirtDof, ::testing::Values(6u, 7u, 9u),
                         [](const auto& info) { return "Dof" + std::to_string(info.param); });

TEST(OptimFlirtValidation, RefusesAnInvertedSearchRange) {
  const auto [status, message] = component_error([] {
    regpipe::HostServices services;
    regpipe::OptimizerInstance optimizer(
        flirt(), services,
        regpipe::resolve_params(flirt(), {{"searchrx_min_deg", "50"}, {"searchrx_max_deg", "10"}}));
  });
  EXPECT_EQ(status, RP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("searchrx_min_deg=50 is above searchrx_max_deg=10"), std::string::npos)
      << message;
}

TEST(OptimFlirtValidation, RefusesAStepLargerThanTheRange) {
  const auto [status, message] = component_error([] {
    regpipe::HostServices services;
    regpipe::OptimizerInstance optimizer(
        flirt(), services, regpipe::resolve_params(flirt(), {{"coarsesearch_deg", "200"}}));
  });
  EXPECT_EQ(status, RP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("coarsesearch_deg=200 is larger than the search range about x (-90..90, "
                         "180 degrees)"),
            std::string::npos)
      << message;
}

TEST(OptimFlirtValidation, TheSchemaRefusesRangesBeyondAHalfTurnAndAZeroStep) {
  // The pipeline checks values against the schema before any image is read.
  EXPECT_THROW(
      {
        try {
          regpipe::resolve_params(flirt(), {{"searchry_max_deg", "200"}});
        } catch (const regpipe::UserError& e) {
          EXPECT_STREQ(e.what(), "searchry_max_deg=200 is above the maximum 180");
          throw;
        }
      },
      regpipe::UserError);
  EXPECT_THROW(
      {
        try {
          regpipe::resolve_params(flirt(), {{"finesearch_deg", "0"}});
        } catch (const regpipe::UserError& e) {
          EXPECT_STREQ(e.what(), "finesearch_deg=0 is below the minimum 1");
          throw;
        }
      },
      regpipe::UserError);
}

TEST(OptimFlirtValidation, CreateRechecksTheSchemaRanges) {
  // Values handed straight to create, past the host's validation.
  const auto [status, message] =
      create_error([](auto& params) { params["searchrz_min_deg"].double_value = -181.0; });
  EXPECT_EQ(status, RP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("searchrz_min_deg=-181 is outside [-180, 180]"), std::string::npos)
      << message;
}

// A NaN compares false with both bounds, so a range check alone let it through to the search.
TEST(OptimFlirtValidation, CreateRefusesANonFiniteNumber) {
  const auto [status, message] = create_error(
      [](auto& params) { params["final_tolerance_voxels"].double_value = std::nan(""); });
  EXPECT_EQ(status, RP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("final_tolerance_voxels is not a finite number"), std::string::npos) << message;
}

// Declared in the descriptor (ABI 1.2) so that the host refuses dof 3 while validating the
// pipeline; minimize's own check below is for hosts that do not read the declaration.
TEST(OptimFlirtValidation, DeclaresTheDofItsRotationSearchSupports) {
  EXPECT_EQ(flirt().supported_dof, RP_DOF_6 | RP_DOF_7 | RP_DOF_9 | RP_DOF_12);
  EXPECT_FALSE(flirt().supports_dof(3));
  EXPECT_TRUE(flirt().supports_dof(12));
  EXPECT_EQ(regpipe::dof_list(flirt().supported_dof), "6, 7, 9 or 12");
}

TEST(OptimFlirtValidation, RefusesDofThreeBeforeAnyEvaluation) {
  StagedObjective objective(3, RippledRotationCost{});
  Params x = kIdentity;
  const auto [status, message] = component_error([&] { minimize_flirt(objective, x); });
  EXPECT_EQ(status, RP_INVALID_ARGUMENT);
  EXPECT_NE(message.find("dof=3 is not supported by optim.flirt"), std::string::npos) << message;
  EXPECT_EQ(objective.calls(), 0u);
}

TEST(OptimFlirt, PropagatesCancellationFromTheObjective) {
  StagedObjective objective(12, RippledRotationCost{});
  objective.cancel_from_call(5);
  Params x = kIdentity;
  const Params start = x;
  const auto [status, message] = component_error([&] { minimize_flirt(objective, x); });
  EXPECT_EQ(status, RP_CANCELLED);
  EXPECT_NE(message.find("cancelled by the test"), std::string::npos) << message;
  EXPECT_EQ(objective.calls(), 5u) << "no evaluation after the cancellation";
  EXPECT_EQ(x, start) << "x is left untouched on failure";
}

TEST(OptimFlirt, ExamplePipelineMirrorsFlirtsDefaults) {
  // examples/flirt_cr.yaml is `flirt -dof 12 -cost corratio`: the search parameters it writes
  // out must be the plugin's own defaults.
  REGPIPE_REQUIRE_DATA(t1, "chris_t1.nii.gz");
  REGPIPE_REQUIRE_DATA(pd, "chris_PD.nii.gz");
  const regpipe::Pipeline p = regpipe::load_pipeline(
      regpipe::test::source_dir() / "examples" / "flirt_cr.yaml",
      {{"inputs.reference", t1.string()}, {"inputs.moving", pd.string()}}, plugins());
  EXPECT_EQ(p.registration.dof, 12u);
  EXPECT_EQ(p.registration.levels_mm, (std::vector<double>{8, 4, 2, 1}));
  EXPECT_EQ(p.registration.cost.plugins, (std::vector<std::string>{"cuda.cr", "cpu.cr"}));
  EXPECT_EQ(p.registration.cost.params.at("bins").value, "256");
  EXPECT_EQ(p.registration.optimizer.plugins, std::vector<std::string>{"optim.flirt"});
  EXPECT_EQ(p.registration.optimizer.params.size(), 9u);
  for (const auto& [name, text] : p.registration.optimizer.params) {
    const regpipe::ParamSchema* schema = flirt().find_param(name);
    ASSERT_NE(schema, nullptr) << name;
    const regpipe::ParamValue given = regpipe::parse_param(*schema, text.value);
    const regpipe::ParamValue fallback = regpipe::parse_param(*schema, schema->default_value);
    EXPECT_EQ(given.double_value, fallback.double_value) << name;
    EXPECT_EQ(given.int_value, fallback.int_value) << name;
  }
}

}  // namespace
