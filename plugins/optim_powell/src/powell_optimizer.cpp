#include "powell_optimizer.hpp"

#include "point.hpp"
#include "powell_params.hpp"
#include "powell_search.hpp"
#include "resolution_cache.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <vector>

namespace regpipe::powell {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Parameter groups of abi.h's layout.
bool is_rotation(size_t i) { return i < 3; }
bool is_translation(size_t i) { return i >= 3 && i < 6; }

std::string format(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The DOF basis scaled to the objective's typical steps. A basis vector that ties several
// parameters (the one scale of 7 DOF) gets one step, the mean of theirs, so they stay tied.
std::vector<Point> initial_directions(const rp_objective& objective) {
  std::vector<Point> directions;
  for (const auto& basis : rp::dof_basis(objective.dof)) {
    double sum = 0.0;
    int count = 0;
    for (size_t i = 0; i < basis.size(); ++i) {
      if (basis[i] == 0.0) continue;
      const double step = objective.typical_step[i];
      if (!(step > 0.0) || !std::isfinite(step))
        throw rp::Error(RP_INVALID_ARGUMENT, "objective typical_step[" + std::to_string(i) + "]=" +
                                                 format(step) + " must be positive and finite");
      sum += step;
      ++count;
    }
    Point d{};
    for (size_t i = 0; i < basis.size(); ++i) d[i] = basis[i] * (sum / count);
    directions.push_back(d);
  }
  return directions;
}

}  // namespace

PowellOptimizer::PowellOptimizer(const rp_host* host, const rp::Params& params) : host_(host) {
  auto read = [&](PowellParam p) { return params.get_number(kPowellParams[p]); };
  max_iterations_ = static_cast<int>(read(kMaxIterations));
  tolerance_ = read(kTolerance);
  resolution_mm_ = read(kResolutionMm);
  resolution_rad_ = read(kResolutionDeg) * kPi / 180.0;
  resolution_scale_ = read(kResolutionScale);
}

void PowellOptimizer::minimize(const rp_objective& objective, double* x_inout, double* f_out) {
  rp::check_objective(objective, x_inout, "optim.powell");
  const std::vector<Point> directions = initial_directions(objective);

  PowellSettings settings;
  settings.max_iterations = max_iterations_;
  settings.tolerance = tolerance_;
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) {
    bool free = false;
    for (const Point& d : directions) free = free || d[i] != 0.0;
    settings.resolution[i] = !free               ? std::numeric_limits<double>::infinity()
                             : is_rotation(i)    ? resolution_rad_
                             : is_translation(i) ? resolution_mm_
                                                 : resolution_scale_;
  }

  Point start;
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) start[i] = x_inout[i];
  CachedObjective cached(objective, settings.resolution);
  const PowellOutcome outcome =
      powell_search(cached, start, directions, settings, [&](int iteration, double cost) {
        progress("Powell iteration " + std::to_string(iteration) + ", cost " + format(cost));
      });

  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) x_inout[i] = cached.best_point()[i];
  *f_out = cached.best_cost();

  std::ostringstream summary;
  summary << "optim.powell: " << (outcome.converged ? "converged" : "stopped at max_iterations")
          << " after " << outcome.iterations << " iterations, cost " << cached.best_cost() << "; "
          << cached.points_sent() << " points sent in " << cached.objective_calls()
          << " objective calls (largest batch " << cached.largest_batch() << "), "
          << cached.points_served() << " served by the resolution cache"
          << (cached.enabled() ? "" : " (disabled)");
  log(RP_LOG_DEBUG, summary.str());
  if (!outcome.converged)
    log(RP_LOG_INFO, "optim.powell: max_iterations=" + std::to_string(max_iterations_) +
                         " reached before the cost settled to tolerance=" + format(tolerance_));
}

void PowellOptimizer::log(int32_t level, const std::string& message) const {
  if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, log) && host_->log != nullptr)
    host_->log(host_->ctx, level, message.c_str());
}

void PowellOptimizer::progress(const std::string& what) const {
  if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, progress) && host_->progress != nullptr)
    host_->progress(host_->ctx, -1.0, what.c_str());
}

}  // namespace regpipe::powell
