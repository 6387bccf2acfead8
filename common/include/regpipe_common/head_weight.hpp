// A smooth head weight derived from an image itself (issue 15, docs/cr-real-pair.md): the
// correlation ratio is a least-squares fit, so the few samples where one head's skin outline
// meets the other's air dominate it; weighting samples by both images' smooth head masks takes
// the outline's weight away without the jumps of a binary mask.
#pragma once

#include <regpipe/abi.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace regpipe_common {

// The `head_weight_mm` parameter of the correlation-ratio costs (cpu.cr, cuda.cr).
inline constexpr rp_param_desc kHeadWeightParam = {
    sizeof(rp_param_desc), "head_weight_mm", RP_PARAM_DOUBLE, "0", 0, 20, nullptr, "mm",
    "weight each sample by both images' head masks (foreground, holes filled) blurred by a Gaussian "
    "of this sigma, so that the skin outline does not dominate the fit (0 = off, FLIRT's CR)"};

// The intensity above which voxels count as head: a fifth of the 99th percentile of the `count`
// finite values (robust to bright outliers, above background noise); 0 for no finite value. The host's
// displacement metric and QA use the same rule.
float foreground_threshold(const float* values, std::size_t count);

// `weight` (1 where null) times the head weight of `image`: its voxels above
// foreground_threshold, enclosed holes filled (background not connected to the grid's faces
// counts as head), blurred by a Gaussian of standard deviation `sigma_mm` along every axis
// (in voxels: sigma_mm / spacing, at most kMaxFieldSigmaVoxels). `weight` is a view of `values`
// on the image's grid (a move keeps the buffer it points into). std::nullopt for sigma_mm 0
// (no head weighting: the caller's weight stands). `image` and `weight` are validated first as
// prepare_image does (messages start with `role`); throws rp::Error(RP_INVALID_ARGUMENT).
struct HeadWeighted {
  std::vector<float> values;
  rp_image weight{};
};
std::optional<HeadWeighted> head_weighted(const rp_image& image, const rp_image* weight, double sigma_mm,
                                          const std::string& role);

}  // namespace regpipe_common
