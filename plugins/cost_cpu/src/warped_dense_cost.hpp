// The cost component of the dense metrics that have no sampling loop of their own (cpu.lcc,
// cpu.mattes): under k affine transforms the moving image is resampled trilinearly onto the
// reference grid (warp_sample.hpp, shared with the CUDA dense costs) and the metric runs on
// that pair, weighted; RP_EXT_DENSE_COST hands the metric the request's images directly.
// `Metric` supplies kParams, a constructor from the parameters and
// `double operator()(const DenseCostInput&, std::span<double> gradient, Execution) const`.
#pragma once

#include "dense_request.hpp"
#include "settings.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/prepared_image.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <optional>
#include <string>
#include <vector>

namespace regpipe::cost_cpu {

// The moving image resampled onto the reference grid under one transform, with weights.
struct WarpedPair {
  std::vector<float> warped, weight;
  double overlap = 0.0;  // w_ref * w_mov over the voxels mapping inside, over the reference's total weight
};

// The reference-voxel to moving-voxel map of one transform; throws rp::Error for a transform
// that is not an invertible affine (`what` names it).
regpipe_common::VoxelMap voxel_map_of(const regpipe_common::PreparedImage& ref,
                                      const regpipe_common::PreparedImage& mov, const double matrix[16],
                                      const std::string& what);

WarpedPair warp_onto_reference(const regpipe_common::PreparedImage& ref, const regpipe_common::PreparedImage& mov,
                               const regpipe_common::VoxelMap& map);

// The (reference, warped moving) pair as a dense metric reads it.
regpipe_common::dense_metrics::DenseCostInput dense_input(const regpipe_common::PreparedImage& ref,
                                                          const WarpedPair& pair);

// Throws RP_CANCELLED when the host asks to stop.
void throw_if_cancelled(const rp_host* host);

// A Metric from one of regpipe_common's dense metrics and its options:
// Fn(input, options, gradient, execution).
template <class Options, double (*Fn)(const regpipe_common::dense_metrics::DenseCostInput&, const Options&,
                                      std::span<double>, regpipe_common::Execution)>
struct MetricWithOptions {
  double operator()(const regpipe_common::dense_metrics::DenseCostInput& in, std::span<double> gradient,
                    regpipe_common::Execution execution) const {
    return Fn(in, options, gradient, execution);
  }
  Options options;
};

template <class Metric>
class WarpedDenseCost {
 public:
  WarpedDenseCost(const rp_host* host, const rp::Params& params)
      : host_(host), metric_(params), execution_(execution_of(read_settings(params, Metric::kParams))) {}

  void set_reference(const rp_image& image, const rp_image* weight) {
    ref_ = regpipe_common::prepare_image(image, weight, "reference");
  }
  void set_moving(const rp_image& image, const rp_image* weight) {
    mov_ = regpipe_common::prepare_image(image, weight, "moving");
  }

  void evaluate(const rp_cost_request& request) {
    if (!ref_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a reference image: call set_reference first");
    if (!mov_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a moving image: call set_moving first");
    const bool with_overlap = RP_HAS_MEMBER(&request, rp_cost_request, overlap_out) && request.overlap_out != nullptr;
    std::vector<regpipe_common::VoxelMap> maps;  // every transform checked before any cost is written
    for (std::size_t t = 0; t < request.k; ++t)
      maps.push_back(voxel_map_of(*ref_, *mov_, request.matrices + 16 * t,
                                  "transform " + std::to_string(t) + " of " + std::to_string(request.k) +
                                      " (reference world -> moving world)"));
    for (std::size_t t = 0; t < request.k; ++t) {
      throw_if_cancelled(host_);
      const WarpedPair pair = warp_onto_reference(*ref_, *mov_, maps[t]);
      request.costs_out[t] = metric_(dense_input(*ref_, pair), {}, execution_);
      if (with_overlap) request.overlap_out[t] = pair.overlap;
    }
  }

  void evaluate_dense(const rp_dense_cost_request& request) {
    evaluate_dense_request(request, [&](const regpipe_common::dense_metrics::DenseCostInput& in,
                                        std::span<double> gradient) { return metric_(in, gradient, execution_); });
  }

 private:
  const rp_host* host_;
  Metric metric_;
  regpipe_common::Execution execution_;
  std::optional<regpipe_common::PreparedImage> ref_, mov_;
};

}  // namespace regpipe::cost_cpu
