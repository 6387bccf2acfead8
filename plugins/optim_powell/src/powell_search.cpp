#include "powell_search.hpp"

#include "line_search.hpp"

#include <cmath>

namespace regpipe::powell {
namespace {

// Keeps the convergence test meaningful at a cost of exactly 0 (Numerical Recipes' TINY).
constexpr double kTiny = 1e-25;

// Minimises along `line`, whose origin is x (cost fx), given the costs one direction length
// either side; moves x to the minimum and returns its cost.
double descend(Line& line, Point& x, double fx, double cost_minus, double cost_plus,
               const Point& resolution) {
  const LineMinimum m = minimize_line(line, cost_minus, fx, cost_plus,
                                      alpha_resolution(line.direction(), resolution));
  x = line.point(m.alpha);
  return m.cost;
}

}  // namespace

PowellOutcome powell_search(CachedObjective& objective, const Point& start,
                            std::vector<Point> directions, const PowellSettings& settings,
                            const IterationCallback& on_iteration) {
  PowellOutcome outcome;
  Point x = start;
  double fx = objective.evaluate(x);
  while (outcome.iterations < settings.max_iterations) {
    ++outcome.iterations;
    const Point x_start = x;
    const double f_start = fx;
    double largest_decrease = 0.0;
    size_t largest_index = 0;
    for (size_t i = 0; i < directions.size(); ++i) {
      Line line(objective, x, directions[i]);
      const auto [cost_minus, cost_plus] = line.costs(-1.0, 1.0);  // the bracket, one batch
      const double f_before = fx;
      fx = descend(line, x, fx, cost_minus, cost_plus, settings.resolution);
      if (f_before - fx > largest_decrease) {
        largest_decrease = f_before - fx;
        largest_index = i;
      }
    }
    on_iteration(outcome.iterations, fx);
    if (2.0 * (f_start - fx) <= settings.tolerance * (std::fabs(f_start) + std::fabs(fx)) + kTiny) {
      outcome.converged = true;
      break;
    }
    // Along the iteration's displacement s: the extrapolated point x + s is also the +1 end
    // of the bracket a line search along s needs, so it goes in one batch with the -1 end.
    Line along_shift(objective, x, difference(x, x_start));
    const auto [f_extrapolated, f_back] = along_shift.costs(1.0, -1.0);
    if (f_extrapolated < f_start) {
      const double t = 2.0 * (f_start - 2.0 * fx + f_extrapolated) *
                           std::pow(f_start - fx - largest_decrease, 2) -
                       largest_decrease * std::pow(f_start - f_extrapolated, 2);
      if (t < 0.0) {
        fx = descend(along_shift, x, fx, f_back, f_extrapolated, settings.resolution);
        directions[largest_index] = directions.back();
        directions.back() = difference(x, x_start);
      }
    }
  }
  return outcome;
}

}  // namespace regpipe::powell
