// The parameter schema of optim.syn: defined once in entry.cpp (the descriptor) and read back
// by syn_settings.cpp, so every range is written in one place.
#pragma once

#include <regpipe/abi.h>

namespace regpipe::optim_syn {

enum SynParam {
  kGradientStep,
  kUpdateFieldVariance,
  kTotalFieldVariance,
  kIterations,
  kShrinkFactors,
  kSmoothingSigmas,
  kSmoothingInMm,
  kConvergenceThreshold,
  kConvergenceWindow,
  kDevice,
  kCudaDevice,
  kSynParamCount
};

extern const rp_param_desc kSynParams[kSynParamCount];

}  // namespace regpipe::optim_syn
