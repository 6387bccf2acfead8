// The 12-parameter point of the search (regpipe_common's, shared with optim.flirt).
#pragma once

#include <regpipe_common/param_point.hpp>

namespace regpipe::powell {

using Point = regpipe_common::ParamPoint;
using regpipe_common::along;
using regpipe_common::difference;

}  // namespace regpipe::powell
