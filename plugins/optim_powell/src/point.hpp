// A point (or direction) of abi.h's 12-parameter affine space and the vector operations the
// search needs. Moving along a direction leaves the coordinates where it is 0 bit-for-bit
// unchanged, which keeps the parameters outside the DOF exactly at their start values.
#pragma once

#include <regpipe/abi.h>

#include <array>

namespace regpipe::powell {

using Point = std::array<double, RP_PARAM_COUNT>;

// x + alpha * d
inline Point along(const Point& x, double alpha, const Point& d) {
  Point out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = x[i] + alpha * d[i];
  return out;
}

// a - b
inline Point difference(const Point& a, const Point& b) {
  Point out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = a[i] - b[i];
  return out;
}

}  // namespace regpipe::powell
