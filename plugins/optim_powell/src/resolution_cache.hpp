// The objective seen through the per-parameter resolution of Shams et al. (2010, section 3.7):
// a point closer than the resolution to one already evaluated is not sent to the objective
// again; the cost of the earlier point is reused. "Closer" is a per-coordinate box: every
// coordinate differs by less than its resolution. A coordinate that never moves (outside the
// DOF) has an infinite resolution; a resolution of 0 on one that moves disables the cache.
#pragma once

#include "point.hpp"

#include <regpipe/abi.h>

#include <cstddef>
#include <vector>

namespace regpipe::powell {

class CachedObjective {
 public:
  // Keeps a reference to `objective`, which must outlive this object.
  CachedObjective(const rp_objective& objective, const Point& resolution);

  // Costs of `points`. Those not served by the cache (nor by an equal-enough point earlier in
  // the same batch) go to the objective in one call. Throws rp::Error on objective failure
  // (RP_CANCELLED included) and RP_INTERNAL on a non-finite cost.
  std::vector<double> evaluate(const std::vector<Point>& points);
  double evaluate(const Point& point) { return evaluate(std::vector<Point>{point})[0]; }

  bool enabled() const { return enabled_; }
  // The best point actually sent to the objective and its exact cost: the honest result,
  // since a cache-served point's cost belongs to a neighbour within the resolution.
  const Point& best_point() const { return best_point_; }
  double best_cost() const { return best_cost_; }

  size_t points_sent() const { return evaluated_.size(); }
  size_t points_served() const { return served_; }
  size_t objective_calls() const { return calls_; }
  size_t largest_batch() const { return largest_batch_; }

 private:
  // Index of a point within the resolution of `p` among `candidates`, or -1.
  long find_close(const std::vector<Point>& candidates, const Point& p) const;

  const rp_objective& objective_;
  Point resolution_;
  bool enabled_;
  std::vector<Point> evaluated_;
  std::vector<double> costs_;
  Point best_point_{};
  double best_cost_ = 0.0;
  size_t served_ = 0;
  size_t calls_ = 0;
  size_t largest_batch_ = 0;
};

}  // namespace regpipe::powell
