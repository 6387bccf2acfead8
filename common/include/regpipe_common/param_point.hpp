// A point (or direction) of abi.h's 12-parameter affine space and the vector operations the
// optimisers' searches need. Moving along a direction leaves the coordinates where it is 0
// bit-for-bit unchanged, which keeps the parameters outside the DOF exactly at their start values.
#pragma once

#include <regpipe/abi.h>

#include <array>
#include <cstddef>

namespace regpipe_common {

using ParamPoint = std::array<double, RP_PARAM_COUNT>;

// x + alpha * d
inline ParamPoint along(const ParamPoint& x, double alpha, const ParamPoint& d) {
  ParamPoint out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = x[i] + alpha * d[i];
  return out;
}

// a - b
inline ParamPoint difference(const ParamPoint& a, const ParamPoint& b) {
  ParamPoint out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = a[i] - b[i];
  return out;
}

}  // namespace regpipe_common
