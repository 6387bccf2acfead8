// The parameter schema of resample.cpu: defined once in entry.cpp (the descriptor) and read
// back by the resampler, so every range is written in one place.
#pragma once

#include <regpipe/abi.h>

namespace regpipe::resample {

enum ResampleParam { kThreads, kSincRadius, kResampleParamCount };

extern const rp_param_desc kResampleParams[kResampleParamCount];

}  // namespace regpipe::resample
