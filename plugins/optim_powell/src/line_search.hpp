// Line minimisation of the objective along one direction: a downhill bracket (Numerical
// Recipes' mnbrak, golden-section growth with parabolic extrapolation) refined by Brent's
// method (Press et al., Numerical Recipes 3rd ed., sections 10.1-10.3). The line is
// parameterised by alpha: the point x + alpha * d, alpha in units of the direction's length.
#pragma once

#include "point.hpp"
#include "resolution_cache.hpp"

#include <utility>

namespace regpipe::powell {

class Line {
 public:
  Line(CachedObjective& objective, const Point& origin, const Point& direction)
      : objective_(objective), origin_(origin), direction_(direction) {}
  const Point& direction() const { return direction_; }
  Point point(double alpha) const { return along(origin_, alpha, direction_); }
  double cost(double alpha) { return objective_.evaluate(point(alpha)); }
  // Costs at two positions in one objective call.
  std::pair<double, double> costs(double alpha_a, double alpha_b);

 private:
  CachedObjective& objective_;
  Point origin_;
  Point direction_;
};

struct LineMinimum {
  double alpha = 0.0;  // 0 unless a strictly lower cost was found
  double cost = 0.0;
};

// The smallest alpha change that moves the point by a full resolution in some coordinate:
// min over coordinates of resolution / |d|. Below it the cache answers, so Brent stops there.
double alpha_resolution(const Point& direction, const Point& resolution);

// Minimises `line` given the costs already known at alpha = -1, 0 and +1 (the caller
// evaluates -1 and +1 in one batch). Refines to `alpha_tolerance` (absolute, in alpha).
LineMinimum minimize_line(Line& line, double cost_minus, double cost_origin, double cost_plus,
                          double alpha_tolerance);

}  // namespace regpipe::powell
