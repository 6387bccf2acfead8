// The parameter schemas of the five components, written once: entry.cpp publishes them as
// descriptors and settings.cpp re-checks create()'s values against the same ranges.
#pragma once

#include <regpipe/abi.h>
#include <regpipe_common/head_weight.hpp>
#include <regpipe_common/param_list.hpp>

#include <cstddef>

namespace regpipe::cost_cpu {

inline constexpr const char* const kInterpolationChoices[] = {"trilinear", "nearest", nullptr};

inline constexpr rp_param_desc param(const char* name, int32_t type, const char* default_value,
                                     double min, double max, const char* unit, const char* doc,
                                     const char* const* choices = nullptr) {
  return {sizeof(rp_param_desc), name, type, default_value, min, max, choices, unit, doc};
}

inline constexpr rp_param_desc bins_param(const char* default_bins, const char* doc) {
  return param("bins", RP_PARAM_INT, default_bins, 2, 1024, "", doc);
}

inline constexpr rp_param_desc kInterpolationParam =
    param("interpolation", RP_PARAM_ENUM, "trilinear", 0, 0, "",
          "how the moving image is sampled: trilinear or nearest", kInterpolationChoices);

inline constexpr rp_param_desc kBorderParam = param(
    "border_mm", RP_PARAM_DOUBLE, "0", 0, 100, "mm",
    "fuzzy edge: sample weight ramps 0->1 over this distance inside the moving image (0 = off)");

inline constexpr rp_param_desc kPartialVolumeParam =
    param("partial_volume", RP_PARAM_BOOL, "false", 0, 1, "",
          "Maes et al. partial-volume histogram: each sample's 8 neighbours get trilinear weights");

inline constexpr rp_param_desc kThreadsParam =
    param("threads", RP_PARAM_INT, "0", 0, 256, "",
          "worker threads (0 = hardware concurrency); results do not depend on it");

inline constexpr rp_param_desc kCorrelationRatioParams[] = {
    bins_param("256", "reference intensity bins, equal-width over its [min, max] (weight > 0)"),
    kInterpolationParam, kBorderParam, regpipe_common::kHeadWeightParam, kThreadsParam};
inline constexpr rp_param_desc kHistogramParams[] = {
    bins_param("64", "bins per image, equal-width over each image's [min, max] (weight > 0)"),
    kInterpolationParam, kBorderParam, kPartialVolumeParam, kThreadsParam};
inline constexpr rp_param_desc kMomentParams[] = {kInterpolationParam, kBorderParam, kThreadsParam};

inline constexpr const char* const kWindowChoices[] = {"box", "gaussian", nullptr};
inline constexpr const char* const kLccGradientChoices[] = {"ants", "exact", nullptr};
inline constexpr rp_param_desc kLocalCcParams[] = {
    param("radius", RP_PARAM_INT, "4", 1, 32, "voxels",
          "box window radius: (2r+1)^3 voxels, ANTs' CC[..., radius]"),
    param("window", RP_PARAM_ENUM, "box", 0, 0, "", "box (ANTs) or gaussian", kWindowChoices),
    param("sigma_mm", RP_PARAM_DOUBLE, "2", 0.1, 50, "mm", "gaussian window's standard deviation"),
    param("gradient", RP_PARAM_ENUM, "ants", 0, 0, "",
          "dense gradient: ants (each voxel's own window, as ANTs' SyN) or exact (the cost's "
          "derivative)",
          kLccGradientChoices),
    kThreadsParam};
inline constexpr rp_param_desc kMattesParams[] = {
    param("bins", RP_PARAM_INT, "32", 5, 1024, "",
          "Parzen histogram bins per image, ANTs' MI[..., bins]: 2 of padding each side, the rest "
          "equal-width over the image's [min, max] among the counted voxels"),
    kThreadsParam};

using regpipe_common::param_list;
using regpipe_common::ParamList;

}  // namespace regpipe::cost_cpu
