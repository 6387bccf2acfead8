// Powell's direction-set method (Numerical Recipes 3rd ed., section 10.7, routine powell):
// line minimisations along each direction in turn, then the iteration's net displacement
// replaces the direction of largest decrease when Powell's test says the new direction helps
// (Acton's "discard the largest decrease" heuristic keeps the set from going degenerate).
#pragma once

#include "point.hpp"
#include "resolution_cache.hpp"

#include <functional>
#include <vector>

namespace regpipe::powell {

struct PowellSettings {
  int max_iterations = 200;
  double tolerance = 1e-6;  // relative cost decrease of one iteration that ends the search
  Point resolution{};       // per parameter; infinite outside the DOF
};

struct PowellOutcome {
  int iterations = 0;
  bool converged = false;  // false: max_iterations ran out first
};

// Called after each iteration with its number and the current cost.
using IterationCallback = std::function<void(int iteration, double cost)>;

// Minimises from `x` along `directions` (in the free subspace). The result is the best point
// the objective actually evaluated: objective.best_point() / best_cost().
PowellOutcome powell_search(CachedObjective& objective, const Point& x,
                            std::vector<Point> directions, const PowellSettings& settings,
                            const IterationCallback& on_iteration);

}  // namespace regpipe::powell
