// The cost component shared by the five measures: image preparation, request validation and
// the threaded evaluation. `Measure` supplies only what differs (see correlation_ratio.hpp):
// its schema, which images it bins, its accumulator and its cost formula.
#pragma once

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/head_weight.hpp>
#include <regpipe_common/prepared_image.hpp>
#include "dense_request.hpp"
#include "settings.hpp"
#include "slab_partition.hpp"
#include "slab_scheduler.hpp"
#include "traversal.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <optional>
#include <string>
#include <vector>

namespace regpipe::cost_cpu {

// Image preparation, sampling and measure formulas shared with the CUDA costs.
using namespace regpipe_common;

template <class Measure>
class CpuCost {
 public:
  CpuCost(const rp_host* host, const rp::Params& params)
      : host_(host),
        settings_(read_settings(params, Measure::kParams)),
        sums_size_(Measure::sums_size(settings_)) {}

  void set_reference(const rp_image& image, const rp_image* weight) {
    PreparedImage ref = prepare(image, weight, "reference", Measure::kBinsReference);
    SlabPartition slabs = make_slab_partition(ref.grid.nz, sums_size_);
    workspace_ = SlabWorkspace(slabs.count(), sums_size_);
    ref_total_weight_ = total_weight_by_slab(ref, slabs);
    slabs_ = std::move(slabs);
    ref_ = std::move(ref);
  }

  void set_moving(const rp_image& image, const rp_image* weight) {
    mov_ = prepare(image, weight, "moving", Measure::kBinsMoving);
  }

  void evaluate(const rp_cost_request& request) {
    if (!ref_) fail("evaluate needs a reference image: call set_reference first");
    if (!mov_) fail("evaluate needs a moving image: call set_moving first");
    if (!RP_HAS_MEMBER(&request, rp_cost_request, costs_out))
      fail("rp_cost_request.size " + std::to_string(request.size) + " is smaller than ABI 1.0's");
    double* overlap_out =
        RP_HAS_MEMBER(&request, rp_cost_request, overlap_out) ? request.overlap_out : nullptr;
    const std::vector<regpipe_common::VoxelMap> maps = voxel_maps(request);
    const auto add = Measure::accumulator(*ref_, *mov_, settings_);
    const SamplingRule rule{settings_.interpolation,
                            BorderWeight(mov_->grid, mov_->spacing_mm, settings_.border_mm)};
    const bool finished = run_slabs(
        request.k, slabs_, workspace_, lanes_, settings_.threads,
        [&](std::size_t t, int z_begin, int z_end, double* sums) noexcept {
          return accumulate_slab(*ref_, *mov_, maps[t], rule, z_begin, z_end, sums, add);
        },
        [&](std::size_t t, const SlabWorkspace& merged) noexcept {
          request.costs_out[t] = Measure::cost(merged.total(), settings_);
          if (overlap_out != nullptr) overlap_out[t] = merged.total_overlap() / ref_total_weight_;
        },
        [&]() noexcept { return cancel_requested(); });
    if (!finished) throw rp::Error(RP_CANCELLED, "cost evaluation cancelled by the host");
  }

  // RP_EXT_DENSE_COST, for the measures that define a dense form (Measure::dense_cost).
  void evaluate_dense(const rp_dense_cost_request& request)
    requires requires(const dense_metrics::DenseCostInput& in, std::span<double> g,
                      const Settings& s) { Measure::dense_cost(in, g, s); }
  {
    evaluate_dense_request(request, [&](const dense_metrics::DenseCostInput& in,
                                        std::span<double> gradient) {
      return Measure::dense_cost(in, gradient, settings_);
    });
  }

 private:
  [[noreturn]] static void fail(const std::string& message) {
    throw rp::Error(RP_INVALID_ARGUMENT, message);
  }

  PreparedImage prepare(const rp_image& image, const rp_image* weight, const char* role,
                        bool binned) const {
    const auto head = head_weighted(image, weight, settings_.head_weight_mm, role);
    PreparedImage p = prepare_image(image, head ? &head->weight : weight, role);
    if (Measure::kNeedsVaryingImages) require_varying(p, role, Measure::kMeasureName);
    if (binned) bin_voxels(p, settings_.bins, role);
    return p;
  }

  // Validates every transform before any work, so a bad one leaves no partial output.
  std::vector<regpipe_common::VoxelMap> voxel_maps(const rp_cost_request& request) const {
    std::vector<regpipe_common::VoxelMap> maps(request.k);
    for (std::size_t t = 0; t < request.k; ++t) {
      const double* matrix = request.matrices + 16 * t;
      regpipe_common::check_affine(matrix, "transform " + std::to_string(t) + " of " + std::to_string(request.k) +
                               " (reference world -> moving world)");
      if (!regpipe_common::make_voxel_map(ref_->voxel_to_world, matrix, mov_->voxel_to_world,
                                          &maps[t]))
        fail("moving voxel_to_world is not invertible");
    }
    return maps;
  }

  bool cancel_requested() const noexcept {
    return host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, should_cancel) &&
           host_->should_cancel != nullptr && host_->should_cancel(host_->ctx) != 0;
  }

  const rp_host* host_;
  Settings settings_;
  std::size_t sums_size_;
  std::optional<PreparedImage> ref_, mov_;
  SlabPartition slabs_;
  SlabWorkspace workspace_;
  std::vector<SlabWorkspace> lanes_;  // run_slabs' per-worker workspaces for large batches
  double ref_total_weight_ = 0.0;
};

}  // namespace regpipe::cost_cpu
