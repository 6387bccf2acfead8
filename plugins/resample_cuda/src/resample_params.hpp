// The parameter schema of resample.cuda, written once: entry.cpp publishes it and the
// constructor re-checks create()'s values against the same ranges.
#pragma once

#include <regpipe/abi.h>
#include <regpipe_common/resample_sampling.hpp>

namespace regpipe::resample_cuda {

inline constexpr const char* const kSamplingChoices[] = {"exact", "texture", nullptr};

inline constexpr rp_param_desc kParams[] = {
    {sizeof(rp_param_desc), "device", RP_PARAM_INT, "0", 0, 63, nullptr, "", "CUDA device index"},
    {sizeof(rp_param_desc), "sampling", RP_PARAM_ENUM, "exact", 0, 0, kSamplingChoices, "",
     "trilinear arithmetic: exact (bit-identical to resample.cpu and the costs) or texture (the "
     "GPU's texture units, 8-bit interpolation weights)"},
    {sizeof(rp_param_desc), "sinc_radius", RP_PARAM_INT, "4", 1, regpipe_common::kMaxSincRadius, nullptr,
     "voxels", "half-width of the Hann-windowed sinc kernel"},
};

}  // namespace regpipe::resample_cuda
