// The parameter schema of cuda.lcc, written once: entry.cpp publishes it and the constructor
// re-checks create()'s values against the same ranges.
#pragma once

#include <regpipe/abi.h>

namespace regpipe::cost_lcc_cuda {

inline constexpr const char* const kSchemeChoices[] = {"separable", "luo", nullptr};
inline constexpr const char* const kGradientChoices[] = {"ants", "exact", nullptr};

inline constexpr rp_param_desc kParams[] = {
    {sizeof(rp_param_desc), "radius", RP_PARAM_INT, "4", 1, 32, nullptr, "voxels",
     "box window radius: (2r+1)^3 voxels, ANTs' CC[..., radius], as cpu.lcc"},
    {sizeof(rp_param_desc), "gradient", RP_PARAM_ENUM, "ants", 0, 0, kGradientChoices, "",
     "dense gradient: ants (each voxel's own window, as ANTs' SyN) or exact (the cost's derivative; "
     "separable only)"},
    {sizeof(rp_param_desc), "scheme", RP_PARAM_ENUM, "separable", 0, 0, kSchemeChoices, "",
     "window sums: separable (ours: running sums along x, y, z, O(N) in the radius) or luo (Luo et al. "
     "2015: a thread per voxel over its (2r+1)^3 window from textures)"},
    {sizeof(rp_param_desc), "device", RP_PARAM_INT, "0", 0, 63, nullptr, "", "CUDA device index"},
    {sizeof(rp_param_desc), "threads_per_block", RP_PARAM_INT, "256", 32, 1024, nullptr, "",
     "threads per block, a multiple of 32"},
};

}  // namespace regpipe::cost_lcc_cuda
