// The rotation grids of FLIRT's initial search (Jenkinson & Smith 2001, section 4.3): a
// regular grid over the three Euler angles, with neighbourhoods for finding its local minima
// and trilinear interpolation of values known at its points.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace regpipe::flirt {

using Vec3 = std::array<double, 3>;
using Angles = Vec3;  // rx, ry, rz [rad]

// The angles of one axis: from min to max in `step` increments, centred in the range when
// the step does not divide it. A range of a full turn wraps around: its last angle neighbours
// the first, and an end equal to the start plus 360 degrees is dropped as a duplicate (so
// -180..180 in steps of 60 gives the papers' 6 angles, not 7).
struct GridAxis {
  std::vector<double> angles;  // [rad], increasing
  bool wraps = false;
};

GridAxis make_axis(double min_deg, double max_deg, double step_deg);

class RotationGrid {
 public:
  explicit RotationGrid(const std::array<GridAxis, 3>& axes);

  size_t size() const { return size_; }
  Angles angles(size_t index) const;

  // Indices of the points that cost less than each of their up to 26 neighbours (ties go to
  // the lower index), the lowest cost first.
  std::vector<size_t> local_minima(const std::vector<double>& costs) const;

  // `values` (one per grid point) interpolated trilinearly at `at`: clamped to the grid's
  // ends on axes that do not wrap, periodic on those that do.
  Vec3 interpolate(const std::vector<Vec3>& values, const Angles& at) const;

 private:
  size_t index(const std::array<size_t, 3>& i) const {
    return i[0] + axes_[0].angles.size() * (i[1] + axes_[1].angles.size() * i[2]);
  }
  std::array<GridAxis, 3> axes_;
  size_t size_;
};

}  // namespace regpipe::flirt
