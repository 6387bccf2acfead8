// The parameter schema of cuda.cr, written once: entry.cpp publishes it and the constructor
// re-checks create()'s values against the same ranges.
#pragma once

#include <regpipe/abi.h>
#include <regpipe_common/head_weight.hpp>

namespace regpipe::cost_cr_cuda {

inline constexpr const char* const kSchemeChoices[] = {"fused",   "scheme1", "scheme2", "scheme3a",
                                                       "scheme3b", "scheme4", "scheme5", nullptr};
inline constexpr const char* const kInterpolationChoices[] = {"trilinear", "nearest", nullptr};

inline constexpr rp_param_desc kParams[] = {
    {sizeof(rp_param_desc), "scheme", RP_PARAM_ENUM, "fused", 0, 0, kSchemeChoices, "",
     "histogram scheme: fused (ours) or Li & Kumar 2014's scheme1..scheme5"},
    {sizeof(rp_param_desc), "bins", RP_PARAM_INT, "256", 2, 1024, nullptr, "",
     "reference intensity bins, equal-width over its [min, max] (weight > 0), as cpu.cr"},
    {sizeof(rp_param_desc), "interpolation", RP_PARAM_ENUM, "trilinear", 0, 0, kInterpolationChoices, "",
     "how the moving image is sampled: trilinear or nearest"},
    {sizeof(rp_param_desc), "border_mm", RP_PARAM_DOUBLE, "0", 0, 100, nullptr, "mm",
     "fuzzy edge: sample weight ramps 0->1 over this distance inside the moving image (0 = off)"},
    regpipe_common::kHeadWeightParam,
    {sizeof(rp_param_desc), "device", RP_PARAM_INT, "0", 0, 63, nullptr, "", "CUDA device index"},
    {sizeof(rp_param_desc), "threads_per_block", RP_PARAM_INT, "256", 32, 1024, nullptr, "",
     "threads per block, a multiple of 32"},
    {sizeof(rp_param_desc), "blocks", RP_PARAM_INT, "0", 0, 65535, nullptr, "",
     "thread blocks per launch, per transform for fused, which takes at least one per 65536 voxels (0 = the "
     "scheme's choice; the paper's block-count experiment)"},
    {sizeof(rp_param_desc), "max_block_workload", RP_PARAM_INT, "768", 32, 1048576, nullptr, "voxels",
     "scheme5: most voxels one block handles (Li & Kumar's 768)"},
};

}  // namespace regpipe::cost_cr_cuda
