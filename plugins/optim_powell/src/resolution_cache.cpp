#include "resolution_cache.hpp"

#include <regpipe/plugin.hpp>

#include <cmath>
#include <string>

namespace regpipe::powell {

CachedObjective::CachedObjective(const rp_objective& objective, const Point& resolution)
    : objective_(objective), resolution_(resolution), enabled_(true) {
  for (double r : resolution_) enabled_ = enabled_ && r > 0.0;
}

long CachedObjective::find_close(const std::vector<Point>& candidates, const Point& p) const {
  // Newest first: a search revisits the neighbourhood it is working in.
  for (size_t n = candidates.size(); n-- > 0;) {
    const Point& c = candidates[n];
    bool close = true;
    for (size_t i = 0; i < p.size() && close; ++i) close = std::fabs(c[i] - p[i]) < resolution_[i];
    if (close) return static_cast<long>(n);
  }
  return -1;
}

std::vector<double> CachedObjective::evaluate(const std::vector<Point>& points) {
  std::vector<double> costs(points.size());
  std::vector<Point> batch;
  // For each requested point: its index in `batch`, or -1 when the cache served it.
  std::vector<long> batch_index(points.size(), -1);
  for (size_t j = 0; j < points.size(); ++j) {
    if (enabled_) {
      const long hit = find_close(evaluated_, points[j]);
      if (hit >= 0) {
        costs[j] = costs_[static_cast<size_t>(hit)];
        ++served_;
        continue;
      }
      batch_index[j] = find_close(batch, points[j]);
      if (batch_index[j] >= 0) {
        ++served_;
        continue;
      }
    }
    batch_index[j] = static_cast<long>(batch.size());
    batch.push_back(points[j]);
  }
  if (batch.empty()) return costs;

  // The objective reads k vectors of param_count doubles back to back.
  static_assert(sizeof(Point) == RP_PARAM_COUNT * sizeof(double));
  std::vector<double> batch_costs(batch.size());
  rp::check(objective_, objective_.evaluate(objective_.ctx, batch.front().data(), batch.size(),
                                            batch_costs.data()));
  ++calls_;
  if (batch.size() > largest_batch_) largest_batch_ = batch.size();
  for (size_t b = 0; b < batch.size(); ++b) {
    if (!std::isfinite(batch_costs[b]))
      throw rp::Error(RP_INTERNAL, "the objective returned a non-finite cost (" +
                                       std::to_string(batch_costs[b]) +
                                       "); costs must be finite (abi.h)");
    if (evaluated_.empty() || batch_costs[b] < best_cost_) {
      best_cost_ = batch_costs[b];
      best_point_ = batch[b];
    }
    evaluated_.push_back(batch[b]);
    costs_.push_back(batch_costs[b]);
  }
  for (size_t j = 0; j < points.size(); ++j)
    if (batch_index[j] >= 0) costs[j] = batch_costs[static_cast<size_t>(batch_index[j])];
  return costs;
}

}  // namespace regpipe::powell
