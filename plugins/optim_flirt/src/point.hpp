// A point (or direction) of abi.h's 12-parameter affine space. Moving along a direction
// leaves the coordinates where it is 0 bit-for-bit unchanged, which keeps the parameters
// outside the DOF exactly at their start values.
#pragma once

#include <regpipe/abi.h>

#include <array>
#include <cstddef>

namespace regpipe::flirt {

using Point = std::array<double, RP_PARAM_COUNT>;

// Parameter groups of abi.h's layout.
constexpr size_t kRotation = 0;     // rx, ry, rz [rad]
constexpr size_t kTranslation = 3;  // tx, ty, tz [mm]
constexpr size_t kScale = 6;        // sx, sy, sz (skews follow at 9)

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

// A point with its cost: a start, a candidate or a local search's result.
struct Scored {
  Point x{};
  double cost = 0.0;
};

}  // namespace regpipe::flirt
