// regpipe_common::Brent::next_after, the prediction optim.flirt's speculation rests on: where it
// gives an abscissa for an outcome, next() after update() with any cost of that outcome returns
// exactly that abscissa. Checked along whole minimisations of several 1-D functions.
#include <regpipe_common/brent.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

namespace {

using regpipe_common::Brent;

struct Checked {
  int lower = 0, higher = 0;
};

// Minimises f over the bracket (-1, 0, 1) as optim.flirt does and checks every prediction whose
// outcome came true: `lower` for a cost at or below the lowest so far, `higher` for a cost
// above every cost so far (so above x's, w's and v's).
Checked check_predictions(const std::function<double(double)>& f, double tolerance) {
  const double fa = f(-1.0), fb = f(0.0), fc = f(1.0);
  Brent brent({-1.0, 1.0, 0.0, fb, fa <= fc ? -1.0 : 1.0, std::min(fa, fc),
               fa <= fc ? 1.0 : -1.0, std::max(fa, fc), 2.0});
  double highest = std::max({fa, fb, fc});
  Checked checked;
  for (int step = 0; step < 60; ++step) {
    if (std::max(brent.x() - brent.a(), brent.b() - brent.x()) <= tolerance) break;
    const double tol1 = 0.5 * tolerance;
    const double u = brent.next(tol1);
    const std::optional<double> if_lower = brent.next_after(u, true, tol1);
    const std::optional<double> if_higher = brent.next_after(u, false, tol1);
    const double fu = f(u);
    const bool lower = fu <= brent.fx(), higher = fu > highest;
    highest = std::max(highest, fu);
    brent.update(u, fu);
    Brent probe = brent;  // next() changes the state; the loop's own call comes next round
    const double next = probe.next(tol1);
    if (lower && if_lower) {
      EXPECT_EQ(next, *if_lower) << "step " << step;
      ++checked.lower;
    }
    if (higher && if_higher) {
      EXPECT_EQ(next, *if_higher) << "step " << step;
      ++checked.higher;
    }
  }
  return checked;
}

TEST(BrentNextAfter, PredictsTheNextAbscissaWhereTheCostsValueDoesNotMatter) {
  Checked total;
  const std::vector<std::function<double(double)>> functions = {
      [](double t) { return (t - 0.3) * (t - 0.3); },
      [](double t) { return std::pow(std::fabs(t + 0.45), 1.5); },
      [](double t) { return std::fabs(t - 0.07) + 0.01 * std::cos(40.0 * t); },
      [](double t) { return -std::exp(-8.0 * (t - 0.6) * (t - 0.6)) + 0.1 * t; },
      [](double t) { return t < 0.2 ? 0.2 - t : 2.0 * (t - 0.2); },
  };
  for (const auto& f : functions)
    for (double tolerance : {0.5, 0.1, 0.02, 0.005}) {
      const Checked c = check_predictions(f, tolerance);
      total.lower += c.lower;
      total.higher += c.higher;
    }
  // Not vacuous: both kinds of prediction came true and were checked.
  EXPECT_GE(total.lower, 10);
  EXPECT_GE(total.higher, 3);
}

TEST(BrentNextAfter, LeavesAParabolicStepAfterANewLowestPointUnpredicted) {
  // Brent's first step from a bracket is parabolic (e = bracket width) and its second is
  // golden (e is then the first step's d = 0); after the first, a new lowest point's parabola
  // would depend on its cost, the golden step does not.
  Brent brent({-1.0, 1.0, 0.0, 1.0, -1.0, 3.0, 1.0, 4.0, 2.0});
  const double u = brent.next(0.01);
  EXPECT_TRUE(brent.next_after(u, true, 0.01).has_value()) << "second step golden";
  brent.update(u, 0.5);
  const double u2 = brent.next(0.01);
  brent.update(u2, 0.4);
  const double u3 = brent.next(0.01);
  EXPECT_FALSE(brent.next_after(u3, true, 0.01).has_value());
}

TEST(BrentVertexWithin, PlacesTheConvexParabolasMinimumRelativeToTheLowestPoint) {
  // (u - 0.1)^2 through x = 0 (the lowest), w = 0.5, v = -0.5: its vertex is 0.1 from x.
  const auto f = [](double u) { return (u - 0.1) * (u - 0.1); };
  const regpipe_common::Brent convex({-0.5, 0.5, 0.0, f(0.0), 0.5, f(0.5), -0.5, f(-0.5), 1.0});
  EXPECT_TRUE(convex.vertex_within(0.11));
  EXPECT_FALSE(convex.vertex_within(0.09));
  // A concave parabola through three points has no minimum to place.
  const regpipe_common::Brent concave({-0.5, 0.5, 0.0, -f(0.0), 0.5, -f(0.5), -0.5, -f(-0.5), 1.0});
  EXPECT_FALSE(concave.vertex_within(10.0));
  // Nor do two points.
  const regpipe_common::Brent two({-0.5, 0.5, 0.0, f(0.0), 0.5, f(0.5), 0.5, f(0.5), 1.0});
  EXPECT_FALSE(two.vertex_within(10.0));
}

}  // namespace
