// The parameter schema of cuda.mi and cuda.nmi, written once: entry.cpp publishes it and the
// constructor re-checks create()'s values against the same ranges.
#pragma once

#include <regpipe/abi.h>

namespace regpipe::cost_mi_cuda {

inline constexpr const char* const kSchemeChoices[] = {"privatised", "per_warp", "sort_and_count",
                                                           "per_thread_packed", "presorted", "approximate",
                                                           "adaptive", nullptr};
inline constexpr const char* const kInterpolationChoices[] = {"trilinear", "nearest", nullptr};

inline constexpr rp_param_desc kParams[] = {
    {sizeof(rp_param_desc), "scheme", RP_PARAM_ENUM, "privatised", 0, 0, kSchemeChoices, "",
     "joint-histogram scheme: privatised (ours), per_warp (Shams & Kennedy 2007, method 1), "
     "sort_and_count (Shams et al. 2010, method 3, radix sort in place of bitonic), per_thread_packed "
     "(Shams & Kennedy 2007, method 2), presorted (Chen et al. 2009 / Vetter & Westermann 2011), "
     "approximate (Shams & Barnes 2007: not exact, README states its error) or adaptive "
     "(Brosch & Tam 2009)"},
    {sizeof(rp_param_desc), "bins", RP_PARAM_INT, "64", 2, 1024, nullptr, "",
     "bins per image, equal-width over each image's [min, max], as cpu.mi; privatised, per_warp, "
     "per_thread_packed and approximate hold bins x bins counters in shared memory (on an H100's "
     "227 KB: privatised at most 340 bins, approximate 482), sort_and_count, presorted and adaptive "
     "any"},
    {sizeof(rp_param_desc), "interpolation", RP_PARAM_ENUM, "trilinear", 0, 0, kInterpolationChoices, "",
     "how the moving image is sampled: trilinear or nearest"},
    {sizeof(rp_param_desc), "partial_volume", RP_PARAM_BOOL, "false", 0, 1, nullptr, "",
     "Maes et al. partial-volume histogram, as cpu.mi's: each sample's 8 neighbours get trilinear "
     "weights (in fixed point, units of 2^-20; README states the error); scheme privatised only, "
     "interpolation trilinear, bins x bins 32-bit counters in shared memory (H100: at most 241 bins)"},
    {sizeof(rp_param_desc), "device", RP_PARAM_INT, "0", 0, 63, nullptr, "", "CUDA device index"},
    {sizeof(rp_param_desc), "threads_per_block", RP_PARAM_INT, "256", 32, 1024, nullptr, "",
     "threads per block, a multiple of 32 (approximate: about one sample in this many is counted)"},
    {sizeof(rp_param_desc), "adaptive_refresh", RP_PARAM_INT, "0", 0, 1000000, nullptr, "",
     "adaptive only: evaluate calls between recomputations of the histogram configuration "
     "(0: only after set_reference or set_moving)"},
};

}  // namespace regpipe::cost_mi_cuda
