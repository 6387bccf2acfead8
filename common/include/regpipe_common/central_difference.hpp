// The neighbours a finite difference takes along one axis, shared by image gradients and field
// Jacobians: index +- 1 inside (central), the point itself on an end of the line (one-sided,
// as ITK's CentralDifferenceImageFunction), and lo == hi on a line of one voxel, where the
// derivative is 0. The derivative is (value[hi] - value[lo]) / ((hi - lo) * spacing).
#pragma once

#include <regpipe_common/voxel_map.hpp>

namespace regpipe_common {

struct DifferenceNeighbours {
  long lo, hi;
};

RP_HD DifferenceNeighbours difference_neighbours(long at, long length) {
  return {at > 0 ? at - 1 : 0, at + 1 < length ? at + 1 : at};
}

}  // namespace regpipe_common
