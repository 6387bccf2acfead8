// The parameter schema of optim.powell: defined once in entry.cpp (the descriptor) and read
// back by the optimizer, so every range is written in one place.
#pragma once

#include <regpipe/abi.h>

namespace regpipe::powell {

enum PowellParam {
  kMaxIterations,
  kTolerance,
  kResolutionMm,
  kResolutionDeg,
  kResolutionScale,
  kPowellParamCount
};

extern const rp_param_desc kPowellParams[kPowellParamCount];

}  // namespace regpipe::powell
