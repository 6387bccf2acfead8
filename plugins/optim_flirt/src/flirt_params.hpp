// The parameter schema of optim.flirt: defined once in entry.cpp (the descriptor) and read
// back by flirt_settings.cpp, so every name, default and range is written in one place.
#pragma once

#include <regpipe/abi.h>

namespace regpipe::flirt {

enum FlirtParam {
  kSearchRxMin,
  kSearchRxMax,
  kSearchRyMin,
  kSearchRyMax,
  kSearchRzMin,
  kSearchRzMax,
  kCoarseSearch,
  kFineSearch,
  kNoSearch,
  kTolerance,
  kFinalTolerance,
  kAdaptiveBrackets,
  kMaxIterations,
  kSpeculate,
  kFlirtParamCount
};

extern const rp_param_desc kFlirtParams[kFlirtParamCount];

}  // namespace regpipe::flirt
