// The 12-parameter point of the search (regpipe_common's, shared with optim.powell), the
// parameter groups of abi.h's layout, and a point with its cost.
#pragma once

#include <regpipe_common/param_point.hpp>

#include <cstddef>

namespace regpipe::flirt {

using Point = regpipe_common::ParamPoint;
using regpipe_common::along;
using regpipe_common::difference;

// Parameter groups of abi.h's layout.
constexpr size_t kRotation = 0;     // rx, ry, rz [rad]
constexpr size_t kTranslation = 3;  // tx, ty, tz [mm]
constexpr size_t kScale = 6;        // sx, sy, sz (skews follow at 9)

// A point with its cost: a start, a candidate or a local search's result.
struct Scored {
  Point x{};
  double cost = 0.0;
};

}  // namespace regpipe::flirt
