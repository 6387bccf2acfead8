// The reference voxels of one row (fixed y, z) that a voxel map sends inside the moving
// image's sampling domain, found from the map instead of by testing every voxel (the CPU
// form of the CUDA costs' reference spans). Exact: the result is the set of x for which the
// traversal's own test, regpipe_common::inside on the float-rounded position, holds.
#pragma once

#include <regpipe_common/row_bracket.hpp>
#include <regpipe_common/voxel_map.hpp>

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

// The bracket of regpipe_common::row_bracket.hpp (shared with cuda.cr's fused kernel), trimmed
// by the exact test to the voxels at either end that map inside.
inline RowSpan inside_span(const regpipe_common::VoxelMap& map, const regpipe_common::Grid& mov,
                           int nx, int y, int z) {
  double lo = 0.0, hi = double(nx - 1);
  const int n[3] = {mov.nx, mov.ny, mov.nz};
  for (int a = 0; a < 3 && lo <= hi; ++a) {
    const double* r = map.m + 4 * a;
    const double last = double(n[a] - 1);
    regpipe_common::narrow_to_axis(regpipe_common::axis_bracket(r[0], last, nx), r[1] * y + r[2] * z + r[3], last,
                                   lo, hi);
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
