#include "line_search.hpp"

#include <regpipe_common/brent.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace regpipe::powell {
namespace {

constexpr double kGold = 1.618034;      // golden-ratio growth of the bracket
constexpr double kGrowthLimit = 100.0;  // farthest parabolic extrapolation, in bracket widths
constexpr double kTiny = 1e-20;         // keeps the parabola's denominator non-zero
// Costs are bounded (abi.h: the worst finite value when there is no overlap), so a descent
// longer than this means a flat or misbehaving objective; the lowest point found is kept.
constexpr int kMaxBracketSteps = 50;
constexpr int kMaxBrentSteps = 100;
// Brent's relative tolerance: the square root of double epsilon, the precision to which a
// smooth minimum can be located at all (Numerical Recipes 10.3). The absolute floor applies
// near alpha = 0 when the resolution cache is disabled (alpha is in direction lengths).
constexpr double kRelativeTolerance = 1.5e-8;
constexpr double kAbsoluteTolerance = 1e-8;

// a, b, c along the line with b between a and c and cost(b) <= cost(a), cost(c).
struct Bracket {
  double a, b, c;
  double fa, fb, fc;
  bool closed;  // false when the descent was cut off: c is then just the lowest point seen
};

// Numerical Recipes' mnbrak from (a, fa) and (b, fb) with fb < fa: walks downhill.
Bracket grow_bracket(Line& line, double a, double fa, double b, double fb) {
  double c = b + kGold * (b - a);
  double fc = line.cost(c);
  for (int step = 0; fb > fc; ++step) {
    if (step == kMaxBracketSteps) return {a, b, c, fa, fb, fc, false};
    const double r = (b - a) * (fb - fc);
    const double q = (b - c) * (fb - fa);
    double u = b - ((b - c) * q - (b - a) * r) /
                       (2.0 * std::copysign(std::max(std::fabs(q - r), kTiny), q - r));
    const double u_limit = b + kGrowthLimit * (c - b);
    double fu;
    if ((b - u) * (u - c) > 0.0) {  // parabolic minimum between b and c
      fu = line.cost(u);
      if (fu < fc) return {b, u, c, fb, fu, fc, true};
      if (fu > fb) return {a, b, u, fa, fb, fu, true};
      u = c + kGold * (c - b);
      fu = line.cost(u);
    } else if ((c - u) * (u - u_limit) > 0.0) {  // beyond c, within the limit
      fu = line.cost(u);
      if (fu < fc) {
        b = c;
        c = u;
        u = c + kGold * (c - b);
        fb = fc;
        fc = fu;
        fu = line.cost(u);
      }
    } else if ((u - u_limit) * (u_limit - c) >= 0.0) {  // parabola overshoots: clamp
      u = u_limit;
      fu = line.cost(u);
    } else {  // parabola points uphill: golden step
      u = c + kGold * (c - b);
      fu = line.cost(u);
    }
    a = b;
    b = c;
    c = u;
    fa = fb;
    fb = fc;
    fc = fu;
  }
  return {a, b, c, fa, fb, fc, true};
}

// Brent's method inside a closed bracket (Numerical Recipes' brent), reusing cost(b).
LineMinimum brent(Line& line, const Bracket& bracket, double alpha_tolerance) {
  const double x = bracket.b, fx = bracket.fb;
  regpipe_common::Brent brent({bracket.a, bracket.c, x, fx, x, fx, x, fx, 0.0});
  for (int step = 0; step < kMaxBrentSteps; ++step) {
    const double tol1 = alpha_tolerance + kRelativeTolerance * std::fabs(brent.x());
    if (std::fabs(brent.x() - brent.middle()) <= 2.0 * tol1 - 0.5 * (brent.b() - brent.a())) break;
    const double u = brent.next(tol1);
    brent.update(u, line.cost(u));
  }
  return {brent.x(), brent.fx()};
}

}  // namespace

std::pair<double, double> Line::costs(double alpha_a, double alpha_b) {
  const std::vector<double> c = objective_.evaluate({point(alpha_a), point(alpha_b)});
  return {c[0], c[1]};
}

double alpha_resolution(const Point& direction, const Point& resolution) {
  double smallest = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < direction.size(); ++i)
    if (direction[i] != 0.0) smallest = std::min(smallest, resolution[i] / std::fabs(direction[i]));
  return std::isfinite(smallest) ? smallest : 0.0;
}

LineMinimum minimize_line(Line& line, double cost_minus, double cost_origin, double cost_plus,
                          double alpha_tolerance) {
  const double tolerance = std::max(alpha_tolerance, kAbsoluteTolerance);
  LineMinimum best;
  if (cost_origin <= cost_minus && cost_origin <= cost_plus) {
    best = brent(line, {-1.0, 0.0, 1.0, cost_minus, cost_origin, cost_plus, true}, tolerance);
  } else {
    const bool forward = cost_plus <= cost_minus;
    const Bracket bracket = grow_bracket(line, 0.0, cost_origin, forward ? 1.0 : -1.0,
                                         forward ? cost_plus : cost_minus);
    best = bracket.closed ? brent(line, bracket, tolerance) : LineMinimum{bracket.c, bracket.fc};
  }
  if (!(best.cost < cost_origin)) return {0.0, cost_origin};
  return best;
}

}  // namespace regpipe::powell
