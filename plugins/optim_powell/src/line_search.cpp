#include "line_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace regpipe::powell {
namespace {

constexpr double kGold = 1.618034;      // golden-ratio growth of the bracket
constexpr double kCGold = 0.3819660;    // golden-section fraction of Brent's fallback step
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
  double a = std::min(bracket.a, bracket.c), b = std::max(bracket.a, bracket.c);
  double x = bracket.b, w = x, v = x;
  double fx = bracket.fb, fw = fx, fv = fx;
  double d = 0.0, e = 0.0;
  for (int step = 0; step < kMaxBrentSteps; ++step) {
    const double xm = 0.5 * (a + b);
    const double tol1 = alpha_tolerance + kRelativeTolerance * std::fabs(x);
    const double tol2 = 2.0 * tol1;
    if (std::fabs(x - xm) <= tol2 - 0.5 * (b - a)) break;
    bool golden = true;
    if (std::fabs(e) > tol1) {
      const double r = (x - w) * (fx - fv);
      double q = (x - v) * (fx - fw);
      double p = (x - v) * q - (x - w) * r;
      q = 2.0 * (q - r);
      if (q > 0.0) p = -p;
      q = std::fabs(q);
      const double e_previous = e;
      e = d;
      // Accept the parabolic step only when it falls inside the bracket and shrinks faster
      // than the step before last.
      if (std::fabs(p) < std::fabs(0.5 * q * e_previous) && p > q * (a - x) && p < q * (b - x)) {
        golden = false;
        d = p / q;
        const double u = x + d;
        if (u - a < tol2 || b - u < tol2) d = std::copysign(tol1, xm - x);
      }
    }
    if (golden) {
      e = x >= xm ? a - x : b - x;
      d = kCGold * e;
    }
    // Never step by less than tol1: closer points are not worth (or not allowed) a cost.
    const double u = std::fabs(d) >= tol1 ? x + d : x + std::copysign(tol1, d);
    const double fu = line.cost(u);
    if (fu <= fx) {
      (u >= x ? a : b) = x;
      v = w;
      w = x;
      x = u;
      fv = fw;
      fw = fx;
      fx = fu;
    } else {
      (u < x ? a : b) = u;
      if (fu <= fw || w == x) {
        v = w;
        w = u;
        fv = fw;
        fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u;
        fv = fu;
      }
    }
  }
  return {x, fx};
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
