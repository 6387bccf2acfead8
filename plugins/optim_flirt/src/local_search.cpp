#include "local_search.hpp"

#include <regpipe_common/brent.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace regpipe::flirt {
namespace {

constexpr double kGold = 1.618034;    // golden-ratio growth of a downhill bracket
// Costs are bounded (abi.h: the worst finite value when there is no overlap), so a descent
// that is still going after this many golden steps (a factor 1.6^25 = 1.7e5 in alpha) means a
// flat objective; the lowest point seen is kept.
constexpr int kMaxExpansions = 25;
constexpr int kMaxBrentSteps = 60;
// Adaptive brackets (LocalSearchSettings::adaptive_brackets): a direction's next bracket is
// this many times its last line's move, and inside such a bracket a line ends once the
// parabola through its three lowest points puts the minimum within this part of the
// tolerance of the lowest (docs/flirt-search.md, "The final pass").
constexpr double kBracketPerMove = 3.0;
constexpr double kParabolaReach = 0.25;

// The costs along x + alpha d already known at alpha = 0, -step and +step.
struct Line {
  Point origin{};
  Point direction{};
  std::optional<double> f0, f_minus, f_plus;
  double step = 1.0;
};

// The points the search asks for once a line search ends at alpha (speculation, below).
using AfterLine = std::function<std::vector<Point>(double alpha)>;

struct LineMinimum {
  double alpha = 0.0;  // 0 unless a strictly lower cost was found
  double cost = 0.0;
  double origin_cost = 0.0;
};

// a < b < c or a > b > c along the line, cost(b) <= cost(a), cost(c).
struct Bracket {
  double a, b, c;
  double fa, fb, fc;
};

Task<double> cost_at(CostChannel& channel, Point p, std::vector<Point> speculative = {}) {
  std::vector<Point> ask{p};
  const std::vector<double> costs = co_await channel.costs(std::move(ask), std::move(speculative));
  co_return costs[0];
}

bool brent_done(const regpipe_common::Brent& brent, double tolerance) {
  return std::max(brent.x() - brent.a(), brent.b() - brent.x()) <= tolerance;
}

// Speculation: what the search asks for after the cost at u, under each outcome where that
// does not depend on the cost's value (regpipe_common::Brent::next_after), or the points that
// follow the line where the outcome ends it. Evaluated with u, they save the next call when
// the outcome comes true; the path is the same either way.
std::vector<Point> brent_continuations(const regpipe_common::Brent& brent, double u,
                                       const Line& line, double tolerance,
                                       const AfterLine& after_line) {
  std::vector<Point> out;
  for (const bool lower : {true, false}) {
    const regpipe_common::Brent next = brent.after(u, lower);
    if (brent_done(next, tolerance)) {
      const std::vector<Point> then = after_line(next.x());
      out.insert(out.end(), then.begin(), then.end());
    } else if (const std::optional<double> v = brent.next_after(u, lower, 0.5 * tolerance)) {
      out.push_back(along(line.origin, *v, line.direction));
    }
  }
  return out;
}

// Brent's method inside a bracket, its first step already parabolic through the bracket's
// three points. Stops when the minimum is known to within `tolerance` either way, or with
// `accept_parabola` once the parabola through the three lowest points places it within
// kParabolaReach * tolerance of the lowest; no two points closer than tolerance/2.
Task<LineMinimum> brent(CostChannel& channel, Line line, Bracket br, double tolerance,
                        bool accept_parabola, AfterLine after_line) {
  const bool a_better = br.fa <= br.fc;
  regpipe_common::Brent brent({br.a, br.c, br.b, br.fb, a_better ? br.a : br.c,
                               a_better ? br.fa : br.fc, a_better ? br.c : br.a,
                               a_better ? br.fc : br.fa, std::fabs(br.c - br.a)});
  for (int step = 0; step < kMaxBrentSteps; ++step) {
    if (brent_done(brent, tolerance)) break;
    if (accept_parabola && brent.vertex_within(kParabolaReach * tolerance)) break;
    const double u = brent.next(0.5 * tolerance);
    std::vector<Point> speculative;
    if (channel.speculating())
      speculative = brent_continuations(brent, u, line, tolerance, after_line);
    brent.update(u, co_await cost_at(channel, along(line.origin, u, line.direction),
                                     std::move(speculative)));
  }
  co_return LineMinimum{brent.x(), brent.fx(), 0.0};
}

// Minimises along `line`: the unknown costs at alpha = 0, -step, +step in one request, a
// downhill bracket if alpha = 0 is not the lowest, then Brent (accept_parabola: above).
// `after_line` gives the points the search asks for next once the line ends at some alpha
// (for speculation only).
Task<LineMinimum> minimise_line(CostChannel& channel, Line line, double tolerance,
                                bool accept_parabola, AfterLine after_line) {
  std::vector<Point> ask;
  if (!line.f0) ask.push_back(line.origin);
  if (!line.f_minus) ask.push_back(along(line.origin, -line.step, line.direction));
  if (!line.f_plus) ask.push_back(along(line.origin, line.step, line.direction));
  const std::vector<double> got = co_await channel.costs(std::move(ask));
  size_t next = 0;
  const double f0 = line.f0 ? *line.f0 : got[next++];
  const double f_minus = line.f_minus ? *line.f_minus : got[next++];
  const double f_plus = line.f_plus ? *line.f_plus : got[next++];

  Bracket bracket{-line.step, 0.0, line.step, f_minus, f0, f_plus};
  if (f0 > f_minus || f0 > f_plus) {
    double a = 0.0, fa = f0;
    double b = f_plus <= f_minus ? line.step : -line.step, fb = std::min(f_plus, f_minus);
    for (int step = 0;; ++step) {
      const double c = b + kGold * (b - a);
      // Speculation: the growth step after this one, should c still be lower.
      std::vector<Point> speculative;
      if (channel.speculating() && step < kMaxExpansions)
        speculative.push_back(along(line.origin, c + kGold * (c - b), line.direction));
      const double fc =
          co_await cost_at(channel, along(line.origin, c, line.direction), std::move(speculative));
      if (fc >= fb) {
        bracket = {a, b, c, fa, fb, fc};
        break;
      }
      if (step == kMaxExpansions) co_return LineMinimum{c, fc, f0};
      a = b;
      fa = fb;
      b = c;
      fb = fc;
    }
  }
  LineMinimum m =
      co_await brent(channel, line, bracket, tolerance, accept_parabola, std::move(after_line));
  if (!(m.cost < f0)) m = {0.0, f0, f0};
  m.origin_cost = f0;
  co_return m;
}

// The smallest change of alpha along `direction` that moves some parameter by its tolerance.
double alpha_tolerance(const Point& direction, const Point& tolerance) {
  double smallest = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < direction.size(); ++i)
    if (direction[i] != 0.0) smallest = std::min(smallest, tolerance[i] / std::fabs(direction[i]));
  return smallest;
}

bool within_tolerance(const Point& shift, const Point& tolerance) {
  for (size_t i = 0; i < shift.size(); ++i)
    if (std::fabs(shift[i]) > tolerance[i]) return false;
  return true;
}

}  // namespace

Task<Scored> local_search(CostChannel& channel, Start start, LocalSearchSettings settings) {
  Point x = start.x;
  std::optional<double> fx = start.cost;
  std::vector<Point>& directions = settings.directions;
  // Each direction's bracket: +-1 step, or with adaptive brackets after its first line
  // kBracketPerMove times its last move, within [half its tolerance, 1].
  std::vector<double> steps(directions.size(), 1.0);
  // What the next line search asks for first, from x along d (its cost at x is known then).
  const auto next_line = [](const Point& from, const Point& d, double step) {
    return std::vector<Point>{along(from, -step, d), along(from, step, d)};
  };
  // Powell's extrapolated point and the other end of its bracket (below).
  const auto shift_ends = [](const Point& from, const Point& shift) {
    return std::vector<Point>{along(from, 1.0, shift), along(from, -1.0, shift)};
  };
  for (int iteration = 0; iteration < settings.max_iterations; ++iteration) {
    const Point x_start = x;
    double f_start = 0.0;
    double largest_decrease = 0.0;
    size_t largest_index = 0;
    for (size_t i = 0; i < directions.size(); ++i) {
      const double tolerance = alpha_tolerance(directions[i], settings.tolerance);
      Line line{x, directions[i], fx, {}, {}, steps[i]};
      // After this line: the next direction's line, or after the last one Powell's pair along
      // the iteration's shift unless the search has converged.
      const AfterLine after_line = [&, i](double alpha) {
        const Point to = along(x, alpha, directions[i]);
        if (i + 1 < directions.size()) return next_line(to, directions[i + 1], steps[i + 1]);
        const Point shift = difference(to, x_start);
        if (within_tolerance(shift, settings.tolerance)) return std::vector<Point>{};
        return shift_ends(to, shift);
      };
      // A parabola through the first sweep's +-1 brackets is too coarse to place a minimum at
      // the tolerance's scale: accepted only inside a bracket sized from a last move.
      const LineMinimum m =
          co_await minimise_line(channel, line, tolerance, steps[i] < 1.0, after_line);
      if (i == 0) f_start = m.origin_cost;
      if (m.origin_cost - m.cost > largest_decrease) {
        largest_decrease = m.origin_cost - m.cost;
        largest_index = i;
      }
      x = along(x, m.alpha, directions[i]);
      fx = m.cost;
      if (settings.adaptive_brackets)
        steps[i] = std::min(std::max(kBracketPerMove * std::fabs(m.alpha), 0.5 * tolerance), 1.0);
    }
    // FLIRT's criterion: an iteration that moved no parameter by more than its tolerance.
    const Point shift = difference(x, x_start);
    if (directions.empty() || within_tolerance(shift, settings.tolerance)) break;

    // Powell's direction replacement (Numerical Recipes 3rd ed., 10.7): the extrapolated
    // point x + shift and the point x - shift are the bracket of a line search along shift,
    // so both go out in one request.
    const std::vector<double> ends = co_await channel.costs(shift_ends(x, shift));
    const double f_extrapolated = ends[0], f_back = ends[1];
    bool replaced = false;
    if (f_extrapolated < f_start) {
      const double t = 2.0 * (f_start - 2.0 * *fx + f_extrapolated) *
                           std::pow(f_start - *fx - largest_decrease, 2) -
                       largest_decrease * std::pow(f_start - f_extrapolated, 2);
      if (t < 0.0) {
        // The directions are replaced first so that the line along shift knows the next
        // iteration's first direction (its own direction is `shift` either way).
        directions[largest_index] = directions.back();
        directions.back() = shift;
        steps[largest_index] = steps.back();
        steps.back() = 1.0;  // the bracket of this line: x -+ shift
        const bool last = iteration + 1 == settings.max_iterations;
        const AfterLine after_line = [&](double alpha) {
          return last ? std::vector<Point>{}
                      : next_line(along(x, alpha, shift), directions[0], steps[0]);
        };
        Line along_shift{x, shift, fx, f_back, f_extrapolated};
        const LineMinimum m = co_await minimise_line(
            channel, along_shift, alpha_tolerance(shift, settings.tolerance), false, after_line);
        x = along(x, m.alpha, shift);
        fx = m.cost;
        replaced = true;
      }
    }
    // Without a line search along shift, a lower end of its bracket is still taken: the
    // search returns the lowest point it has seen.
    if (!replaced && std::min(f_extrapolated, f_back) < *fx) {
      const bool forward = f_extrapolated <= f_back;
      x = along(x, forward ? 1.0 : -1.0, shift);
      fx = forward ? f_extrapolated : f_back;
    }
  }
  if (!fx) {  // no free direction: the start's cost is the result
    fx = co_await cost_at(channel, x);
  }
  co_return Scored{x, *fx};
}

}  // namespace regpipe::flirt
