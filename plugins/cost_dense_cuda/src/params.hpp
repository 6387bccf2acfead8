// The parameter schemas of cuda.lcc, cuda.ls and cuda.mattes, written once: entry.cpp publishes
// them and the components' constructors re-check create()'s values against the same ranges.
#pragma once

#include <regpipe/abi.h>
#include <regpipe_common/param_list.hpp>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

inline constexpr const char* const kSchemeChoices[] = {"separable", "luo", nullptr};
inline constexpr const char* const kGradientChoices[] = {"ants", "exact", nullptr};

inline constexpr rp_param_desc kDeviceParam = {
    sizeof(rp_param_desc), "device", RP_PARAM_INT, "0", 0, 63, nullptr, "", "CUDA device index"};
inline constexpr rp_param_desc kThreadsPerBlockParam = {
    sizeof(rp_param_desc), "threads_per_block", RP_PARAM_INT, "256", 32, 1024, nullptr, "",
    "threads per block, a multiple of 32"};

inline constexpr rp_param_desc kLccParams[] = {
    {sizeof(rp_param_desc), "radius", RP_PARAM_INT, "4", 1, 32, nullptr, "voxels",
     "box window radius: (2r+1)^3 voxels, ANTs' CC[..., radius], as cpu.lcc"},
    {sizeof(rp_param_desc), "gradient", RP_PARAM_ENUM, "ants", 0, 0, kGradientChoices, "",
     "dense gradient: ants (each voxel's own window, as ANTs' SyN) or exact (the cost's derivative; "
     "separable only)"},
    {sizeof(rp_param_desc), "scheme", RP_PARAM_ENUM, "separable", 0, 0, kSchemeChoices, "",
     "window sums: separable (ours: one pass, a block per x-y tile marching along z with running sums) or luo "
     "(Luo et al. 2015: a thread per voxel over its (2r+1)^3 window from textures)"},
    kDeviceParam,
    kThreadsPerBlockParam,
};

inline constexpr rp_param_desc kMeanSquaresParams[] = {kDeviceParam, kThreadsPerBlockParam};

inline constexpr int kMaxMattesBins = 128;  // a warp's joint histogram fits in shared memory
inline constexpr rp_param_desc kMattesParams[] = {
    {sizeof(rp_param_desc), "bins", RP_PARAM_INT, "32", 5, kMaxMattesBins, nullptr, "",
     "Parzen histogram bins per image, ANTs' MI[..., bins], as cpu.mattes (which takes up to 1024)"},
    kDeviceParam,
    kThreadsPerBlockParam,
};

using regpipe_common::param_list;
using regpipe_common::ParamList;

}  // namespace regpipe::cost_dense_cuda
