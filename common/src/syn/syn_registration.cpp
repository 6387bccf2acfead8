#include <regpipe_common/syn/syn_registration.hpp>

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/fields/composition.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/fields/inverse.hpp>
#include <regpipe_common/fields/resample_field.hpp>
#include <regpipe_common/fields/warp_image.hpp>
#include <regpipe_common/resample_request.hpp>
#include <regpipe_common/syn/convergence_monitor.hpp>
#include <regpipe_common/syn/syn_levels.hpp>
#include <regpipe_common/syn/syn_update.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

namespace regpipe_common::syn {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw rp::Error(RP_INVALID_ARGUMENT, "SyN: " + message);
}

void check_options(const SynOptions& o) {
  require(std::isfinite(o.gradient_step) && o.gradient_step > 0.0,
          "gradient_step " + std::to_string(o.gradient_step) + " must be positive");
  for (double v : {o.update_field_variance_in_voxel_space, o.total_field_variance_in_voxel_space})
    require(v >= 0.0 && std::sqrt(v) <= kMaxFieldSigmaVoxels,
            "a field variance of " + std::to_string(v) + " voxels^2 is outside [0, " +
                std::to_string(kMaxFieldSigmaVoxels * kMaxFieldSigmaVoxels) + "]");
  require(!o.levels.empty(), "no levels");
  for (const SynLevel& l : o.levels) {
    require(l.iterations >= 0, "a level's iterations " + std::to_string(l.iterations) + " is negative");
    require(l.shrink_factor >= 1, "a level's shrink factor " + std::to_string(l.shrink_factor) + " is below 1");
  }
  require(std::isfinite(o.convergence_threshold), "the convergence threshold must be finite");
  require(o.inverse_iterations >= 0 && o.final_inverse_iterations >= 0, "inverse iterations must be at least 0");
}

// One side's pair of half-way fields: `to_mid` takes the side's points to the midpoint space,
// `from_mid` takes midpoint points back (the pull-back that samples the side's image there).
struct HalfWay {
  DisplacementField to_mid, from_mid;
};

HalfWay zero_half_way(const FieldGeometry& grid) { return {zero_field(grid), zero_field(grid)}; }

HalfWay resampled(const HalfWay& h, const FieldGeometry& grid, Execution execution) {
  return {resample_field(view_of(h.to_mid), grid, execution), resample_field(view_of(h.from_mid), grid, execution)};
}

InverseOptions per_iteration_inverse(const SynOptions& o, const FieldGeometry& grid) {
  double spacing = axis_spacing(grid.voxel_to_world, 0);
  for (int a = 1; a < 3; ++a) spacing = std::min(spacing, axis_spacing(grid.voxel_to_world, a));
  InverseOptions inverse;
  inverse.max_iterations = o.inverse_iterations;
  inverse.max_residual_mm = o.inverse_max_residual_voxels * spacing;
  inverse.mean_residual_mm = o.inverse_mean_residual_voxels * spacing;
  inverse.min_iterations = std::min(1, o.inverse_iterations);
  return inverse;
}

// Steps 3 and 4 of the header for one side: compose the scaled update, smooth the total, and
// re-derive the inverse pair.
void advance(HalfWay& side, const DisplacementField& update, const SynOptions& o, const InverseOptions& inverse) {
  DisplacementField total = compose_first_then_second(view_of(side.to_mid), view_of(update), o.execution);
  ants_smooth_field(total, o.total_field_variance_in_voxel_space, o.execution);
  side.from_mid = invert_displacement_field(view_of(total), inverse, &side.from_mid, o.execution).inverse;
  side.to_mid = invert_displacement_field(view_of(side.from_mid), inverse, &total, o.execution).inverse;
}

// The smoothed update of one side: smoothed with the update variance, scaled to the step.
DisplacementField scaled_update(DisplacementField direction, const SynOptions& o) {
  ants_smooth_field(direction, o.update_field_variance_in_voxel_space, o.execution);
  scale_to_step(direction, o.gradient_step);
  return direction;
}

// One level: iterations until the count or convergence. Returns its report.
SynLevelReport run_level(int level_index, const SynLevel& level, const FieldGeometry& grid, const rp_image& fixed,
                         const rp_image& moving, const rp_image* fixed_mask, HalfWay& fixed_side,
                         HalfWay& moving_side, const SynOptions& o, const SynMetricFunction& metric,
                         const SynObserver& observer) {
  const auto start = std::chrono::steady_clock::now();
  SynLevelReport report;
  report.shrink_factor = level.shrink_factor;
  report.grid = grid.dims;
  const std::vector<float> fixed_smooth = smoothed_image(fixed, level.smoothing_sigma, o.smoothing_sigmas_in_mm, o.execution);
  const std::vector<float> moving_smooth =
      smoothed_image(moving, level.smoothing_sigma, o.smoothing_sigmas_in_mm, o.execution);
  const rp_image fixed_level = with_data(fixed, fixed_smooth), moving_level = with_data(moving, moving_smooth);
  const InverseOptions inverse = per_iteration_inverse(o, grid);
  ConvergenceMonitor monitor(o.convergence_window_size);
  for (int iteration = 0; iteration < level.iterations; ++iteration) {
    const std::vector<float> fixed_mid = warp_image(fixed_level, view_of(fixed_side.from_mid), grid, 0.0f, o.execution);
    const std::vector<float> moving_mid =
        warp_image(moving_level, view_of(moving_side.from_mid), grid, 0.0f, o.execution);
    std::vector<float> mask_mid;
    if (fixed_mask != nullptr) {
      mask_mid = warp_image(*fixed_mask, view_of(fixed_side.from_mid), grid, 0.0f, o.execution);
      for (float& m : mask_mid) m = m >= 0.5f ? 1.0f : 0.0f;
    }
    MetricDescent for_fixed = metric_descent(grid, fixed_mid, moving_mid, mask_mid, metric, o.execution);
    MetricDescent for_moving = metric_descent(grid, moving_mid, fixed_mid, mask_mid, metric, o.execution);
    const double value = 0.5 * (for_fixed.value + for_moving.value);
    advance(fixed_side, scaled_update(std::move(for_fixed.direction), o), o, inverse);
    advance(moving_side, scaled_update(std::move(for_moving.direction), o), o, inverse);

    monitor.add(value);
    report.metric_values.push_back(value);
    report.convergence_values.push_back(monitor.convergence_value());
    if (observer && !observer(level_index, iteration, value))
      throw rp::Error(RP_CANCELLED, "SyN cancelled at level " + std::to_string(level_index) + ", iteration " +
                                        std::to_string(iteration));
    if (report.convergence_values.back() < o.convergence_threshold) {
      report.converged = true;
      break;
    }
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

// Not in ANTs (syn_options.hpp): the from_mid fields inverted again to a tight tolerance, so
// that the forward and inverse warps are inverse to each other. Returns the largest residual.
double refine_inverses(HalfWay& side, const SynOptions& o) {
  if (o.final_inverse_iterations == 0) return 0.0;
  InverseOptions tight;
  tight.max_iterations = o.final_inverse_iterations;
  tight.max_residual_mm = o.final_inverse_max_residual_mm;
  InverseResult r = invert_displacement_field(view_of(side.to_mid), tight, &side.from_mid, o.execution);
  side.from_mid = std::move(r.inverse);
  return r.max_residual_mm;
}

}  // namespace

SynResult syn_register(const rp_image& fixed, const rp_image& moving, const SynOptions& options,
                       const double* initial_affine, const SynObserver& observer) {
  return syn_register(fixed, moving, nullptr, options, initial_affine, observer);
}

SynResult syn_register(const rp_image& fixed, const rp_image& moving, const rp_image* fixed_mask,
                       const SynOptions& options, const double* initial_affine, const SynObserver& observer) {
  check_options(options);
  const FieldGeometry full = geometry_of(fixed);
  geometry_of(moving);  // checks it
  if (fixed_mask != nullptr) {
    const FieldGeometry mask_grid = geometry_of(*fixed_mask);
    require(mask_grid.dims.nx == full.dims.nx && mask_grid.dims.ny == full.dims.ny && mask_grid.dims.nz == full.dims.nz &&
                std::equal(full.voxel_to_world, full.voxel_to_world + 16, mask_grid.voxel_to_world),
            "the fixed mask's grid is not the fixed image's");
  }
  const SynMetricFunction metric = options.metric_function ? options.metric_function
                                                           : builtin_metric(options.metric, options.execution);
  std::vector<float> moving_through_affine;
  rp_image moving_input = moving;
  if (initial_affine) {
    check_affine(initial_affine, "SyN initial affine");
    const DisplacementField affine = affine_as_field(initial_affine, full, options.execution);
    moving_through_affine = warp_image(moving, view_of(affine), full, 0.0f, options.execution);
    moving_input = with_data(fixed, moving_through_affine);  // now on the fixed grid
  }

  SynResult result;
  HalfWay fixed_side, moving_side;
  for (std::size_t l = 0; l < options.levels.size(); ++l) {
    const SynLevel& level = options.levels[l];
    const FieldGeometry grid = shrink_geometry(full, level.shrink_factor);
    fixed_side = l == 0 ? zero_half_way(grid) : resampled(fixed_side, grid, options.execution);
    moving_side = l == 0 ? zero_half_way(grid) : resampled(moving_side, grid, options.execution);
    result.levels.push_back(
        run_level(int(l), level, grid, fixed, moving_input, fixed_mask, fixed_side, moving_side, options, metric,
                  observer));
  }
  result.inverse_max_residual_mm = std::max(refine_inverses(fixed_side, options), refine_inverses(moving_side, options));

  result.forward = compose_first_then_second(view_of(fixed_side.to_mid), view_of(moving_side.from_mid), options.execution);
  result.inverse = compose_first_then_second(view_of(moving_side.to_mid), view_of(fixed_side.from_mid), options.execution);
  result.mid_from_fixed = std::move(fixed_side.to_mid);
  result.fixed_from_mid = std::move(fixed_side.from_mid);
  result.mid_from_moving = std::move(moving_side.to_mid);
  result.moving_from_mid = std::move(moving_side.from_mid);
  return result;
}

}  // namespace regpipe_common::syn
