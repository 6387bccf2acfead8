// The reference voxels of one row (fixed y, z) that a voxel map sends inside the moving
// image's sampling domain, found from the map instead of by testing every voxel (the CPU
// form of the CUDA costs' reference spans). Exact: the result is the set of x for which the
// traversal's own test, regpipe_common::inside on the float-rounded position, holds.
#pragma once

#include <regpipe_common/voxel_map.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace regpipe::cost_cpu {

// Moving voxel coordinate `axis` of reference voxel (x, y, z), computed as the traversal
// computes it: in double, in this order, rounded once to float.
inline float mapped_coordinate(const regpipe_common::VoxelMap& map, int axis, int x, int y, int z) {
  const double* r = map.m + 4 * axis;
  return float(r[0] * x + r[1] * y + r[2] * z + r[3]);
}

inline bool maps_inside(const regpipe_common::VoxelMap& map, const regpipe_common::Grid& mov,
                        int x, int y, int z) {
  return regpipe_common::inside(mov, mapped_coordinate(map, 0, x, y, z),
                                mapped_coordinate(map, 1, x, y, z),
                                mapped_coordinate(map, 2, x, y, z));
}

struct RowSpan {
  int begin = 0, end = 0;  // x in [begin, end); empty when begin >= end
};

// Each rounded coordinate is monotone in x (every double operation and the rounding to float
// are monotone), so the x for which it lies in [0, n-1] form an interval, and so does their
// intersection over the three axes. The real-valued solution of the map's inequalities,
// widened by a margin that covers the float rounding, brackets that interval; the exact test
// then trims the few voxels at either end.
inline RowSpan inside_span(const regpipe_common::VoxelMap& map, const regpipe_common::Grid& mov,
                           int nx, int y, int z) {
  double lo = 0.0, hi = double(nx - 1);
  const int n[3] = {mov.nx, mov.ny, mov.nz};
  for (int a = 0; a < 3 && lo <= hi; ++a) {
    const double* r = map.m + 4 * a;
    const double at0 = r[1] * y + r[2] * z + r[3];  // coordinate at x = 0
    const double slope = r[0], top = double(n[a] - 1);
    if (slope == 0.0) continue;  // constant along the row: the exact test below decides
    // A float near the domain is off by at most a few ulps of max(|top|, |at0|) + 1 from the
    // real value; in x that is that many ulps divided by the slope, plus a voxel of slack.
    const double ulps = 4.0 * double(std::numeric_limits<float>::epsilon()) *
                        (std::max(top, std::abs(at0)) + 1.0);
    const double margin = 1.0 + ulps / std::abs(slope);
    double first = (0.0 - at0) / slope, last = (top - at0) / slope;
    if (slope < 0.0) std::swap(first, last);
    lo = std::max(lo, std::floor(first - margin));
    hi = std::min(hi, std::ceil(last + margin));
  }
  RowSpan span;
  if (!(lo <= hi)) return span;
  span.begin = int(lo);
  span.end = int(hi) + 1;
  while (span.begin < span.end && !maps_inside(map, mov, span.begin, y, z)) ++span.begin;
  while (span.end > span.begin && !maps_inside(map, mov, span.end - 1, y, z)) --span.end;
  return span;
}

}  // namespace regpipe::cost_cpu
