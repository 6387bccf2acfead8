// optim.powell through the host API: convergence on quadratic bowls at every DOF and in a
// curved valley, confinement to the DOF, the resolution cache, batching and cancellation.
#include "support/test_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

using Params = std::array<double, RP_PARAM_COUNT>;

constexpr double kPi = 3.14159265358979323846;
constexpr Params kIdentity = {0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0};
// About what the host hands out at a 2 mm level for a 100 mm radius: 2 mm, 0.02 rad, 2 %.
constexpr Params kTypicalStep = {0.02, 0.02, 0.02, 2, 2, 2, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02};
// The plugin's default resolutions (0.05 degree, 0.02 mm, 0.0005) per parameter.
constexpr double kDefaultRad = 0.05 * kPi / 180.0;
constexpr Params kDefaultResolution = {kDefaultRad, kDefaultRad, kDefaultRad, 0.02,
                                       0.02,        0.02,        0.0005,      0.0005,
                                       0.0005,      0.0005,      0.0005,      0.0005};

// An rp_objective around a function of the 12 parameters that records every point and batch.
class RecordingObjective {
 public:
  RecordingObjective(uint32_t dof, std::function<double(const Params&)> cost)
      : cost_(std::move(cost)) {
    objective_.size = sizeof(objective_);
    objective_.ctx = this;
    objective_.param_count = RP_PARAM_COUNT;
    objective_.dof = dof;
    objective_.typical_step = typical_step_.data();
    objective_.level_count = 1;
    objective_.levels_mm = &level_mm_;
    objective_.evaluate = &RecordingObjective::evaluate;
    objective_.set_level = [](void*, uint32_t) -> rp_status { return RP_OK; };
    objective_.last_error = [](void* ctx) -> const char* {
      return static_cast<RecordingObjective*>(ctx)->last_error_.c_str();
    };
    objective_.begin_stage = [](void*, const char*) {};
  }

  rp_objective& abi() { return objective_; }
  Params& typical_step() { return typical_step_; }
  const std::vector<Params>& points() const { return points_; }
  const std::vector<size_t>& batch_sizes() const { return batch_sizes_; }
  // From the given call on, evaluate answers RP_CANCELLED (as the host does on Ctrl-C).
  void cancel_from_call(size_t call) { cancel_from_call_ = call; }

 private:
  static rp_status evaluate(void* ctx, const double* params, size_t k, double* costs) {
    auto* self = static_cast<RecordingObjective*>(ctx);
    if (self->batch_sizes_.size() >= self->cancel_from_call_) {
      self->last_error_ = "cancelled by the test";
      return RP_CANCELLED;
    }
    self->batch_sizes_.push_back(k);
    for (size_t j = 0; j < k; ++j) {
      Params p;
      for (size_t i = 0; i < RP_PARAM_COUNT; ++i) p[i] = params[j * RP_PARAM_COUNT + i];
      self->points_.push_back(p);
      costs[j] = self->cost_(p);
    }
    return RP_OK;
  }

  std::function<double(const Params&)> cost_;
  Params typical_step_ = kTypicalStep;
  double level_mm_ = 2.0;
  rp_objective objective_{};
  std::string last_error_;
  std::vector<Params> points_;
  std::vector<size_t> batch_sizes_;
  size_t cancel_from_call_ = SIZE_MAX;
};

const regpipe::Component& powell() {
  static regpipe::PluginHost host({{regpipe::test::plugin_dir()}, false, false});
  return host.require(RP_KIND_OPTIMIZER, "optim.powell");
}

// Minimises `objective` from `x` (updated) with the given parameter texts; returns the cost.
double minimize(RecordingObjective& objective, Params& x,
                const std::map<std::string, std::string>& params = {}) {
  regpipe::HostServices services;
  regpipe::OptimizerInstance optimizer(powell(), services,
                                       regpipe::resolve_params(powell(), params));
  double f = 0.0;
  optimizer.minimize(objective.abi(), x.data(), &f);
  return f;
}

// A quadratic bowl with its minimum (cost 0.5, like a typical 1 - CR) at `centre`. Each
// parameter has its own length scale, so stiffness differs by orders of magnitude across
// parameters, and rotations couple to translations as they do in an image cost.
struct Bowl {
  Params centre = {0.05, -0.03, 0.08, 3, -2, 5, 1.05, 0.97, 1.08, 0.02, -0.01, 0.03};
  Params scale = {0.01, 0.03, 0.02, 1, 3, 2, 0.01, 0.03, 0.02, 0.02, 0.01, 0.03};

  double operator()(const Params& x) const {
    Params e;
    for (size_t i = 0; i < e.size(); ++i) e[i] = (x[i] - centre[i]) / scale[i];
    double f = 0.5;
    for (double v : e) f += v * v;
    return f + 0.5 * (e[0] * e[4] + e[1] * e[3] + e[2] * e[5]);
  }

  // The minimum over the free parameters of `dof` with the rest held at kIdentity. The
  // coupling stays within rotations and translations, both free at DOF >= 6, so each free
  // parameter's minimum is its centre; 7 DOF's single scale minimises the weighted sum.
  Params constrained_minimum(uint32_t dof) const {
    Params m = kIdentity;
    for (size_t i = 0; i < 6; ++i) m[i] = centre[i];
    if (dof == 7) {
      double num = 0.0, den = 0.0;
      for (size_t i = 6; i < 9; ++i) {
        num += centre[i] / (scale[i] * scale[i]);
        den += 1.0 / (scale[i] * scale[i]);
      }
      m[6] = m[7] = m[8] = num / den;
    }
    if (dof >= 9)
      for (size_t i = 6; i < 9; ++i) m[i] = centre[i];
    if (dof == 12)
      for (size_t i = 9; i < 12; ++i) m[i] = centre[i];
    return m;
  }
};

bool is_free(uint32_t dof, size_t i) {
  if (i < 3) return dof >= 6;
  if (i < 6) return true;
  if (i < 9) return dof >= 7;
  return dof == 12;
}

// Pairs of evaluated points within the resolution box of each other (every coordinate closer
// than its resolution): exactly what the cache exists to avoid.
size_t close_pairs(const std::vector<Params>& points, const Params& resolution) {
  size_t pairs = 0;
  for (size_t a = 0; a < points.size(); ++a)
    for (size_t b = a + 1; b < points.size(); ++b) {
      bool close = true;
      for (size_t i = 0; i < RP_PARAM_COUNT && close; ++i)
        close = std::fabs(points[a][i] - points[b][i]) < resolution[i];
      pairs += close ? 1 : 0;
    }
  return pairs;
}

class PowellBowl : public ::testing::TestWithParam<uint32_t> {};

TEST_P(PowellBowl, ReachesTheConstrainedMinimum) {
  const uint32_t dof = GetParam();
  const Bowl bowl;
  RecordingObjective objective(dof, bowl);
  if (dof == 7) objective.typical_step()[7] = 0.03;  // unequal steps must not untie the scales
  Params x = kIdentity;
  const double f = minimize(objective, x);

  const Params expected = bowl.constrained_minimum(dof);
  // The resolution cache ends the search once no step larger than the resolution helps, so
  // the minimum is found to a few resolutions (0.05 degree, 0.02 mm, 0.0005); far below
  // anything an image registration can resolve, far above what a broken search reaches.
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) {
    if (is_free(dof, i))
      EXPECT_NEAR(x[i], expected[i], 4.0 * kDefaultResolution[i]) << "parameter " << i;
    else
      EXPECT_EQ(x[i], kIdentity[i]) << "parameter " << i << " is outside the DOF";
  }
  if (dof == 7) {
    EXPECT_EQ(x[6], x[7]);
    EXPECT_EQ(x[7], x[8]);
  }
  EXPECT_EQ(f, bowl(x)) << "the reported cost must be the cost of the returned point";
  EXPECT_LT(f, bowl(expected) + 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Dof, PowellBowl, ::testing::Values(6u, 7u, 9u, 12u),
                         [](const auto& info) { return "Dof" + std::to_string(info.param); });

TEST(Powell, FollowsACurvedValley) {
  // Rosenbrock's valley in (tx, ty) plus a bowl in tz; minimum 0 at (1, 1, 0) mm.
  RecordingObjective objective(3, [](const Params& x) {
    const double a = x[4] - x[3] * x[3], b = 1.0 - x[3];
    return 100.0 * a * a + b * b + x[5] * x[5];
  });
  objective.typical_step() = Params{0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0};  // only DOF 3 is read
  Params x = kIdentity;
  x[3] = -1.2;
  x[4] = 1.0;
  x[5] = 0.5;
  const double f = minimize(
      objective, x, {{"resolution_mm", "0"}, {"tolerance", "1e-12"}, {"max_iterations", "1000"}});
  EXPECT_NEAR(x[3], 1.0, 1e-3);
  EXPECT_NEAR(x[4], 1.0, 2e-3);
  EXPECT_NEAR(x[5], 0.0, 1e-3);
  EXPECT_LT(f, 1e-6);
}

TEST(Powell, NeverMovesParametersOutsideTheDof) {
  // The bowl pulls on all 12 parameters; at 6 DOF scales and skews must keep their start
  // values bit for bit in every point sent, not just in the result.
  const Bowl bowl;
  RecordingObjective objective(6, bowl);
  Params x = {0, 0, 0, 0, 0, 0, 1.1, 0.9, 1.2, 0.05, -0.04, 0.03};
  const Params start = x;
  minimize(objective, x);
  ASSERT_FALSE(objective.points().empty());
  for (const Params& p : objective.points())
    for (size_t i = 6; i < RP_PARAM_COUNT; ++i) ASSERT_EQ(p[i], start[i]) << "parameter " << i;
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(x[i], bowl.centre[i], 4.0 * kDefaultResolution[i]);
}

TEST(PowellResolution, NeverEvaluatesAPointCloserThanTheResolutionToAnother) {
  RecordingObjective cached(6, Bowl{});
  Params x = kIdentity;
  minimize(cached, x);
  EXPECT_EQ(close_pairs(cached.points(), kDefaultResolution), 0u);

  // The same search without the cache does send such points, and more of them overall.
  RecordingObjective uncached(6, Bowl{});
  Params y = kIdentity;
  minimize(uncached, y,
           {{"resolution_mm", "0"}, {"resolution_deg", "0"}, {"resolution_scale", "0"}});
  EXPECT_GT(close_pairs(uncached.points(), kDefaultResolution), 0u);
  EXPECT_GT(uncached.points().size(), cached.points().size());
}

TEST(PowellResolution, ZeroOnAFreeParameterDisablesTheCache) {
  // Closeness needs every coordinate within its resolution, so a 0 on any moving parameter
  // (here the translations) turns the cache off altogether.
  RecordingObjective objective(6, Bowl{});
  Params x = kIdentity;
  minimize(objective, x, {{"resolution_mm", "0"}});
  EXPECT_GT(close_pairs(objective.points(), kDefaultResolution), 0u);
}

TEST(Powell, SendsBracketsInBatchesOfTwo) {
  RecordingObjective objective(12, Bowl{});
  Params x = kIdentity;
  minimize(objective, x);
  size_t pairs = 0;
  for (size_t k : objective.batch_sizes()) {
    EXPECT_LE(k, 2u);
    pairs += k == 2 ? 1 : 0;
  }
  // At least one bracket per direction of the first iteration went out as a pair.
  EXPECT_GE(pairs, 12u);
}

TEST(Powell, PropagatesCancellationFromTheObjective) {
  RecordingObjective objective(6, Bowl{});
  objective.cancel_from_call(5);
  Params x = kIdentity;
  try {
    minimize(objective, x);
    FAIL() << "minimize returned although the objective was cancelled";
  } catch (const regpipe::ComponentError& e) {
    EXPECT_EQ(e.status(), RP_CANCELLED);
    EXPECT_NE(std::string(e.what()).find("cancelled by the test"), std::string::npos) << e.what();
  }
  EXPECT_EQ(objective.batch_sizes().size(), 5u) << "no evaluation after the cancellation";
}

TEST(Powell, DeclaresEveryDof) {
  EXPECT_EQ(powell().supported_dof, RP_DOF_ALL);
  for (unsigned dof : {3u, 6u, 7u, 9u, 12u}) EXPECT_TRUE(powell().supports_dof(dof)) << dof;
}

TEST(Powell, RefusesAnObjectiveOfAnotherParameterCount) {
  RecordingObjective objective(6, Bowl{});
  objective.abi().param_count = 6;
  Params x = kIdentity;
  try {
    minimize(objective, x);
    FAIL() << "accepted param_count=6";
  } catch (const regpipe::ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("param_count=6"), std::string::npos) << e.what();
  }
}

TEST(Powell, RefusesAZeroTypicalStepOnAFreeParameter) {
  RecordingObjective objective(6, Bowl{});
  objective.typical_step()[4] = 0.0;
  Params x = kIdentity;
  try {
    minimize(objective, x);
    FAIL() << "accepted typical_step[4]=0";
  } catch (const regpipe::ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("typical_step[4]=0"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(objective.points().empty()) << "nothing may be evaluated before the checks";
}

}  // namespace
