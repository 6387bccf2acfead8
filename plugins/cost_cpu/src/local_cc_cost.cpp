#include "local_cc_cost.hpp"

#include "dense_request.hpp"

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/resample_sampling.hpp>
#include <regpipe_common/voxel_map.hpp>
#include <regpipe_common/warp_sample.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace regpipe::cost_cpu {
namespace {

using namespace regpipe_common;
using dense_metrics::DenseCostInput;
using dense_metrics::LccGradient;
using dense_metrics::WindowShape;

// One of the two choices of an enum parameter: false for the first, true for the second.
bool second_choice(const rp::Params& params, const char* name, const char* first, const char* second) {
  const std::string v = params.get_string(name);
  if (v != first && v != second)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    std::string(name) + "=" + v + " is not one of " + first + ", " + second);
  return v == second;
}

// A number parameter, re-checked against kLocalCcParams' range as the host's validation does.
double checked_number(const rp::Params& params, const char* name) {
  for (const rp_param_desc& p : kLocalCcParams)
    if (std::string(p.name) == name) {
      const double v = p.type == RP_PARAM_INT ? double(params.get_int(name)) : params.get_double(name);
      if (!std::isfinite(v)) throw rp::Error(RP_INVALID_ARGUMENT, std::string(name) + " is not a finite number");
      rp::Params::check_range(name, v, p.min, p.max);
      return v;
    }
  throw rp::Error(RP_INTERNAL, std::string("cpu.lcc has no parameter ") + name);
}

dense_metrics::LocalCcOptions read_options(const rp::Params& params) {
  dense_metrics::LocalCcOptions o;
  const double radius = checked_number(params, "radius");
  const double sigma = checked_number(params, "sigma_mm");
  o.window.radius_voxels = std::size_t(radius);
  o.window.sigma_mm = sigma;
  o.window.shape = second_choice(params, "window", "box", "gaussian") ? WindowShape::gaussian : WindowShape::box;
  o.gradient = second_choice(params, "gradient", "ants", "exact") ? LccGradient::exact : LccGradient::ants_own_window;
  return o;
}

}  // namespace

LocalCcCost::LocalCcCost(const rp_host* host, const rp::Params& params)
    : host_(host),
      options_(read_options(params)),
      execution_(execution_of(read_settings(params, param_list(kLocalCcParams)))) {}

void LocalCcCost::set_reference(const rp_image& image, const rp_image* weight) {
  ref_ = prepare_image(image, weight, "reference");
}

void LocalCcCost::set_moving(const rp_image& image, const rp_image* weight) {
  mov_ = prepare_image(image, weight, "moving");
}

void LocalCcCost::evaluate(const rp_cost_request& request) {
  if (!ref_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a reference image: call set_reference first");
  if (!mov_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a moving image: call set_moving first");
  for (std::size_t t = 0; t < request.k; ++t)
    check_affine(request.matrices + 16 * t, "transform " + std::to_string(t) + " of " +
                                                std::to_string(request.k) + " (reference world -> moving world)");
  for (std::size_t t = 0; t < request.k; ++t) {
    if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, should_cancel) && host_->should_cancel != nullptr &&
        host_->should_cancel(host_->ctx) != 0)
      throw rp::Error(RP_CANCELLED, "cost evaluation cancelled by the host");
    double overlap = 0.0;
    request.costs_out[t] = evaluate_one(request.matrices + 16 * t, &overlap);
    if (RP_HAS_MEMBER(&request, rp_cost_request, overlap_out) && request.overlap_out != nullptr)
      request.overlap_out[t] = overlap;
  }
}

// The moving image resampled trilinearly onto the reference grid (warp_sample.hpp, shared with
// cuda.lcc); a voxel counts with the reference weight times the moving weight where it maps
// inside the moving image, else not at all (ANTs' CC likewise sums only voxels inside both images).
double LocalCcCost::evaluate_one(const double matrix[16], double* overlap) const {
  VoxelMap map;
  if (!make_voxel_map(ref_->voxel_to_world, matrix, mov_->voxel_to_world, &map))
    throw rp::Error(RP_INVALID_ARGUMENT, "moving voxel_to_world is not invertible");
  const Grid& g = ref_->grid;
  const std::size_t n = voxel_count(g);
  std::vector<float> warped(n, 0.f), weight(n, 0.f);
  double inside_weight = 0.0, total_weight = 0.0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = std::size_t(x) + std::size_t(g.nx) * (y + std::size_t(g.ny) * z);
        const float w_ref = ref_->weight(i);
        total_weight += w_ref;
        const WarpedVoxel v = warp_voxel(map, x, y, z, w_ref, mov_->values.data(),
                                         mov_->weights.empty() ? nullptr : mov_->weights.data(), mov_->grid);
        if (!v.inside) continue;
        inside_weight += w_ref;
        weight[i] = v.weight;
        warped[i] = v.value;
      }
  *overlap = total_weight > 0.0 ? inside_weight / total_weight : 0.0;
  const DenseCostInput in{{g, {ref_->spacing_mm[0], ref_->spacing_mm[1], ref_->spacing_mm[2]}},
                          ref_->values, warped, weight, {}};
  return dense_metrics::local_cc(in, options_, {}, execution_);
}

void LocalCcCost::evaluate_dense(const rp_dense_cost_request& request) {
  evaluate_dense_request(request, [&](const DenseCostInput& in, std::span<double> gradient) {
    return dense_metrics::local_cc(in, options_, gradient, execution_);
  });
}

}  // namespace regpipe::cost_cpu
