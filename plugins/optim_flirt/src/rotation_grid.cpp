#include "rotation_grid.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace regpipe::flirt {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kRadPerDeg = kPi / 180.0;
// Angles given in degrees by people: a grid of 20 steps of 18 degrees must come out as
// exactly 20 intervals despite rounding.
constexpr double kSlackDeg = 1e-9;

// Where `at` falls on one axis: the two grid indices around it and the weight of the second.
struct Bracket {
  size_t lower, upper;
  double weight;
};

Bracket locate(const GridAxis& axis, double at) {
  const std::vector<double>& a = axis.angles;
  const size_t n = a.size();
  if (n == 1) return {0, 0, 0.0};
  if (axis.wraps) {
    const double turn = 2.0 * kPi;
    const double t = a[0] + std::fmod(std::fmod(at - a[0], turn) + turn, turn);  // in [a0, a0+2pi)
    size_t lower = static_cast<size_t>(std::upper_bound(a.begin(), a.end(), t) - a.begin()) - 1;
    const double upper_angle = lower + 1 < n ? a[lower + 1] : a[0] + turn;
    return {lower, (lower + 1) % n, (t - a[lower]) / (upper_angle - a[lower])};
  }
  if (at <= a.front()) return {0, 0, 0.0};
  if (at >= a.back()) return {n - 1, n - 1, 0.0};
  const size_t lower =
      static_cast<size_t>(std::upper_bound(a.begin(), a.end(), at) - a.begin()) - 1;
  return {lower, lower + 1, (at - a[lower]) / (a[lower + 1] - a[lower])};
}

}  // namespace

GridAxis make_axis(double min_deg, double max_deg, double step_deg) {
  GridAxis axis;
  const double range = max_deg - min_deg;
  if (range <= 0.0 || step_deg <= 0.0) {
    axis.angles = {min_deg * kRadPerDeg};
    return axis;
  }
  const int intervals = static_cast<int>(std::floor(range / step_deg + kSlackDeg));
  const double first = min_deg + 0.5 * (range - intervals * step_deg);
  for (int i = 0; i <= intervals; ++i) axis.angles.push_back((first + i * step_deg) * kRadPerDeg);
  axis.wraps = range >= 360.0 - kSlackDeg;
  if (axis.wraps && axis.angles.size() > 1 && std::fabs(intervals * step_deg - 360.0) <= kSlackDeg)
    axis.angles.pop_back();
  return axis;
}

RotationGrid::RotationGrid(const std::array<GridAxis, 3>& axes)
    : axes_(axes), size_(axes[0].angles.size() * axes[1].angles.size() * axes[2].angles.size()) {}

Angles RotationGrid::angles(size_t index) const {
  const size_t nx = axes_[0].angles.size(), ny = axes_[1].angles.size();
  return {axes_[0].angles[index % nx], axes_[1].angles[(index / nx) % ny],
          axes_[2].angles[index / (nx * ny)]};
}

std::vector<size_t> RotationGrid::local_minima(const std::vector<double>& costs) const {
  const std::array<long, 3> n = {long(axes_[0].angles.size()), long(axes_[1].angles.size()),
                                 long(axes_[2].angles.size())};
  std::vector<size_t> minima;
  for (size_t p = 0; p < size_; ++p) {
    const std::array<long, 3> at = {long(p) % n[0], (long(p) / n[0]) % n[1],
                                    long(p) / (n[0] * n[1])};
    bool lowest = true;
    for (long dz = -1; dz <= 1 && lowest; ++dz)
      for (long dy = -1; dy <= 1 && lowest; ++dy)
        for (long dx = -1; dx <= 1 && lowest; ++dx) {
          const std::array<long, 3> offset = {dx, dy, dz};
          std::array<size_t, 3> q{};
          bool inside = true;
          for (int a = 0; a < 3; ++a) {
            long i = at[a] + offset[a];
            if (axes_[a].wraps) i = (i + n[a]) % n[a];
            inside = inside && i >= 0 && i < n[a];
            q[a] = static_cast<size_t>(i);
          }
          const size_t neighbour = inside ? index(q) : p;
          if (neighbour == p) continue;
          lowest = costs[p] < costs[neighbour] || (costs[p] == costs[neighbour] && p < neighbour);
        }
    if (lowest) minima.push_back(p);
  }
  std::stable_sort(minima.begin(), minima.end(),
                   [&](size_t a, size_t b) { return costs[a] < costs[b]; });
  return minima;
}

Vec3 RotationGrid::interpolate(const std::vector<Vec3>& values, const Angles& at) const {
  const std::array<Bracket, 3> b = {locate(axes_[0], at[0]), locate(axes_[1], at[1]),
                                    locate(axes_[2], at[2])};
  Vec3 out{};
  for (int corner = 0; corner < 8; ++corner) {
    double weight = 1.0;
    std::array<size_t, 3> i{};
    for (int a = 0; a < 3; ++a) {
      const bool upper = (corner >> a) & 1;
      weight *= upper ? b[a].weight : 1.0 - b[a].weight;
      i[a] = upper ? b[a].upper : b[a].lower;
    }
    if (weight == 0.0) continue;
    for (int k = 0; k < 3; ++k) out[k] += weight * values[index(i)][k];
  }
  return out;
}

}  // namespace regpipe::flirt
