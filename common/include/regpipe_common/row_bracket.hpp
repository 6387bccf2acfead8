// Which x of a reference row (fixed y, z) can map inside the moving image's sampling domain,
// bracketed from the affine voxel map instead of testing every voxel: shared by cost_cpu's
// row spans (which then trim the bracket to the exact voxels) and cuda.cr's fused kernel
// (which walks the 64-voxel steps the bracket touches), __host__ __device__ under nvcc.
//
// Along a row, moving axis a's position is m x + at0 (m = map[4a], at0 = map[4a+1] y +
// map[4a+2] z + map[4a+3]), computed in double and rounded to float: monotonic in x, so the x
// whose rounded position lies in [0, last] form one interval, and so does their intersection
// over the axes. The bracket solves -margin <= m x + at0 <= last + margin and widens the
// solution by a voxel: the margin covers the float rounding of any position near the domain
// and the double arithmetic (terms of the map far below 2^28 voxels), the voxel the rounding
// of the bracket's own arithmetic. The margin depends on the axis and the row's length, not
// on the row, so a caller may compute an axis's bracket once per map and narrow each row
// with two multiply-adds.
#pragma once

#include <regpipe_common/voxel_map.hpp>  // RP_HD

#include <cfloat>
#include <cmath>

namespace regpipe_common {

struct AxisBracket {
  double inverse;   // 1 / m; 0 for an axis flat along the row (its position moves less than margin)
  double from, to;  // the x bracket of a row whose at0 is 0
  double margin;    // in voxels of the moving axis
};

// Axis bracket of slope m (the map's x coefficient for this axis) for rows of `row_length`
// voxels and a moving axis whose last voxel is `last`.
RP_HD AxisBracket axis_bracket(double m, double last, int row_length) {
  const double travel = fabs(m) * double(row_length);
  const double margin = 4.0 * double(FLT_EPSILON) * (last + travel + 2.0);
  if (travel <= margin) return {0.0, 0.0, 0.0, margin};
  const double inverse = 1.0 / m, low = -margin * inverse, high = (last + margin) * inverse;
  return {inverse, (m > 0.0 ? low : high) - 1.0, (m > 0.0 ? high : low) + 1.0, margin};
}

// Narrows the x range [lo, hi] of a row whose position at x = 0 is at0 to axis bracket b;
// empties it (hi < lo, lo >= 0) where no voxel of the row maps inside on this axis.
RP_HD void narrow_to_axis(const AxisBracket& b, double at0, double last, double& lo, double& hi) {
  if (b.inverse == 0.0) {
    if (!(at0 >= -2.0 * b.margin && at0 <= last + 2.0 * b.margin)) hi = -1.0;
    return;
  }
  // One multiply-add each (contracted to an FMA by nvcc); the voxel of widening covers either
  // rounding.
  const double from = b.from - at0 * b.inverse, to = b.to - at0 * b.inverse;
  lo = from > lo ? from : lo;
  hi = to < hi ? to : hi;
}

}  // namespace regpipe_common
