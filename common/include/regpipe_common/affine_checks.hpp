// Validation of the 4x4 matrices that cross the ABI (image voxel_to_world, request transforms).
#pragma once

#include <string>

namespace regpipe_common {

// Throws rp::Error(RP_INVALID_ARGUMENT) naming `what` unless the row-major 4x4 `m` is a
// finite affine (last row 0 0 0 1) whose linear part is invertible.
void check_affine(const double m[16], const std::string& what);

}  // namespace regpipe_common
