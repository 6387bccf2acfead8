// syn_register_device (device_syn.hpp): syn_registration.cpp's loop, step for step, with the
// fields in device memory. Comments name the reference's step they mirror.
#include "regpipe_common_cuda/device_syn.hpp"

#include "regpipe_common_cuda/device_buffer.hpp"
#include "regpipe_common_cuda/device_fields.hpp"

#include "device_field_kernels.hpp"

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/fields/composition.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/fields/inverse.hpp>
#include <regpipe_common/fields/warp_image.hpp>
#include <regpipe_common/resample_request.hpp>
#include <regpipe_common/syn/convergence_monitor.hpp>
#include <regpipe_common/syn/syn_levels.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace regpipe_common_cuda {
namespace {

namespace rc = regpipe_common;
namespace syn = regpipe_common::syn;
using Buffer = std::unique_ptr<DeviceBuffer<float>>;

void require(bool ok, const std::string& message) {
  if (!ok) throw rp::Error(RP_INVALID_ARGUMENT, "SyN: " + message);
}

// syn_registration.cpp's check_options (private there), the same checks and messages.
void check_options(const syn::SynOptions& o) {
  require(std::isfinite(o.gradient_step) && o.gradient_step > 0.0,
          "gradient_step " + std::to_string(o.gradient_step) + " must be positive");
  for (double v : {o.update_field_variance_in_voxel_space, o.total_field_variance_in_voxel_space})
    require(v >= 0.0 && std::sqrt(v) <= rc::kMaxFieldSigmaVoxels,
            "a field variance of " + std::to_string(v) + " voxels^2 is outside [0, " +
                std::to_string(rc::kMaxFieldSigmaVoxels * rc::kMaxFieldSigmaVoxels) + "]");
  require(!o.levels.empty(), "no levels");
  for (const syn::SynLevel& l : o.levels) {
    require(l.iterations >= 0, "a level's iterations " + std::to_string(l.iterations) + " is negative");
    require(l.shrink_factor >= 1, "a level's shrink factor " + std::to_string(l.shrink_factor) + " is below 1");
  }
  require(std::isfinite(o.convergence_threshold), "the convergence threshold must be finite");
  require(o.inverse_iterations >= 0 && o.final_inverse_iterations >= 0, "inverse iterations must be at least 0");
}

std::size_t voxels_of(const rp_image& image) { return std::size_t(image.dims[0]) * image.dims[1] * image.dims[2]; }

Buffer device_floats(std::size_t count) {
  auto b = std::make_unique<DeviceBuffer<float>>();
  b->ensure(std::max<std::size_t>(count, 1));
  return b;
}

// One side's half-way pair (syn_registration.cpp's HalfWay) on the level's grid.
struct DeviceHalfWay {
  Buffer to_mid, from_mid;
};

DeviceHalfWay zero_half_way(const rc::FieldGeometry& grid, cudaStream_t stream) {
  const std::size_t floats = 3 * rc::voxel_count(grid.dims);
  DeviceHalfWay h{device_floats(floats), device_floats(floats)};
  RP_CUDA_CHECK(cudaMemsetAsync(h.to_mid->get(), 0, floats * sizeof(float), stream));
  RP_CUDA_CHECK(cudaMemsetAsync(h.from_mid->get(), 0, floats * sizeof(float), stream));
  return h;
}

DeviceHalfWay resampled(const DeviceHalfWay& h, const rc::FieldGeometry& from, const rc::FieldGeometry& to,
                        cudaStream_t stream) {
  const std::size_t floats = 3 * rc::voxel_count(to.dims);
  DeviceHalfWay out{device_floats(floats), device_floats(floats)};
  device_resample_field(rc::view_of(from, h.to_mid->get()), to, out.to_mid->get(), stream);
  device_resample_field(rc::view_of(from, h.from_mid->get()), to, out.from_mid->get(), stream);
  return out;
}

rc::InverseOptions per_iteration_inverse(const syn::SynOptions& o, const rc::FieldGeometry& grid) {
  double spacing = rc::axis_spacing(grid.voxel_to_world, 0);
  for (int a = 1; a < 3; ++a) spacing = std::min(spacing, rc::axis_spacing(grid.voxel_to_world, a));
  rc::InverseOptions inverse;
  inverse.max_iterations = o.inverse_iterations;
  inverse.max_residual_mm = o.inverse_max_residual_voxels * spacing;
  inverse.mean_residual_mm = o.inverse_mean_residual_voxels * spacing;
  inverse.min_iterations = std::min(1, o.inverse_iterations);
  return inverse;
}

std::vector<float> downloaded(const float* device, std::size_t count, cudaStream_t stream) {
  std::vector<float> host(count);
  RP_CUDA_CHECK(cudaMemcpyAsync(host.data(), device, count * sizeof(float), cudaMemcpyDeviceToHost, stream));
  RP_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

class Registration {
 public:
  Registration(const syn::SynOptions& o, const DeviceSynMetric& metric, const syn::SynObserver& observer,
               cudaStream_t stream)
      : o_(o), metric_(metric), observer_(observer), stream_(stream) {}

  // advance(): steps 3 and 4 for one side, `update` already smoothed and scaled.
  void advance(DeviceHalfWay& side, const float* update, const rc::FieldGeometry& grid,
               const rc::InverseOptions& inverse) {
    float* total = total_->get();
    device_compose_first_then_second(rc::view_of(grid, side.to_mid->get()), rc::view_of(grid, update), total, stream_);
    device_ants_smooth_field(total, grid, o_.total_field_variance_in_voxel_space, scratch_, stream_);
    device_invert_displacement_field(rc::view_of(grid, total), inverse, side.from_mid->get(), side.from_mid->get(),
                                     scratch_, stream_);
    device_invert_displacement_field(rc::view_of(grid, side.from_mid->get()), inverse, total, side.to_mid->get(),
                                     scratch_, stream_);
  }

  // metric_descent + scaled_update of one side into `direction`.
  double descent(const rc::FieldGeometry& grid, const float* fixed, const float* moving, const float* mask,
                 float* direction) {
    const std::size_t floats = 3 * rc::voxel_count(grid.dims);
    RP_CUDA_CHECK(cudaMemsetAsync(direction, 0, floats * sizeof(float), stream_));
    // The metric (a plugin's evaluate_dense) runs on its own stream: the images must be there.
    RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double value = metric_(grid, fixed, moving, mask, direction, stream_);
    detail::launch_negate(direction, floats, stream_);
    device_ants_smooth_field(direction, grid, o_.update_field_variance_in_voxel_space, scratch_, stream_);
    device_scale_to_step(direction, grid, o_.gradient_step, scratch_, stream_);
    return value;
  }

  syn::SynLevelReport run_level(int level_index, const syn::SynLevel& level, const rc::FieldGeometry& grid,
                                const rp_image& fixed, const Buffer& fixed_full, const rp_image& moving,
                                const Buffer& moving_full, const Buffer& mask_full,
                                const rp_image* fixed_mask, DeviceHalfWay& fixed_side, DeviceHalfWay& moving_side) {
    const auto start = std::chrono::steady_clock::now();
    syn::SynLevelReport report;
    report.shrink_factor = level.shrink_factor;
    report.grid = grid.dims;
    const std::size_t voxels = rc::voxel_count(grid.dims);
    // The level's smoothed full-resolution images (syn::smoothed_image), on the device from
    // the images uploaded once.
    const Buffer fixed_level = smoothed(fixed, fixed_full, level.smoothing_sigma);
    const Buffer moving_level = smoothed(moving, moving_full, level.smoothing_sigma);
    rp_image fixed_on_device = fixed, moving_on_device = moving;
    fixed_on_device.data = fixed_level->get();
    moving_on_device.data = moving_level->get();
    rp_image mask_on_device{};
    if (fixed_mask != nullptr) {
      mask_on_device = *fixed_mask;
      mask_on_device.data = mask_full->get();
    }
    const Buffer fixed_mid = device_floats(voxels), moving_mid = device_floats(voxels), mask_mid = device_floats(voxels);
    const Buffer for_fixed = device_floats(3 * voxels), for_moving = device_floats(3 * voxels);
    total_ = device_floats(3 * voxels);
    const rc::InverseOptions inverse = per_iteration_inverse(o_, grid);
    syn::ConvergenceMonitor monitor(o_.convergence_window_size);
    for (int iteration = 0; iteration < level.iterations; ++iteration) {
      // 1. both images (and the mask) pulled to the midpoint
      device_warp_image(fixed_on_device, rc::view_of(grid, fixed_side.from_mid->get()), grid, 0.0f, fixed_mid->get(),
                        stream_);
      device_warp_image(moving_on_device, rc::view_of(grid, moving_side.from_mid->get()), grid, 0.0f,
                        moving_mid->get(), stream_);
      const float* mask = nullptr;
      if (fixed_mask != nullptr) {
        device_warp_image(mask_on_device, rc::view_of(grid, fixed_side.from_mid->get()), grid, 0.0f, mask_mid->get(),
                          stream_);
        detail::launch_threshold_mask(mask_mid->get(), voxels, stream_);
        mask = mask_mid->get();
      }
      // 2. each side's descent, smoothed and scaled
      const double value_fixed = descent(grid, fixed_mid->get(), moving_mid->get(), mask, for_fixed->get());
      const double value_moving = descent(grid, moving_mid->get(), fixed_mid->get(), mask, for_moving->get());
      const double value = 0.5 * (value_fixed + value_moving);
      // 3 and 4
      advance(fixed_side, for_fixed->get(), grid, inverse);
      advance(moving_side, for_moving->get(), grid, inverse);
      // 5
      monitor.add(value);
      report.metric_values.push_back(value);
      report.convergence_values.push_back(monitor.convergence_value());
      if (observer_ && !observer_(level_index, iteration, value))
        throw rp::Error(RP_CANCELLED, "SyN cancelled at level " + std::to_string(level_index) + ", iteration " +
                                          std::to_string(iteration));
      if (report.convergence_values.back() < o_.convergence_threshold) {
        report.converged = true;
        break;
      }
    }
    RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
  }

  // syn::smoothed_image of `image`, whose voxels are at `full` on the device.
  Buffer smoothed(const rp_image& image, const Buffer& full, double sigma) {
    if (!(sigma >= 0.0 && std::isfinite(sigma)))
      throw rp::Error(RP_INVALID_ARGUMENT, "SyN smoothing sigma " + std::to_string(sigma) + " must be at least 0");
    const rc::FieldGeometry g = syn::geometry_of(image);
    const std::size_t voxels = rc::voxel_count(g.dims);
    Buffer out = device_floats(voxels);
    RP_CUDA_CHECK(cudaMemcpyAsync(out->get(), full->get(), voxels * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
    double sigma_voxels[3];
    for (int a = 0; a < 3; ++a)
      sigma_voxels[a] = o_.smoothing_sigmas_in_mm ? sigma / rc::axis_spacing(image.voxel_to_world, a) : sigma;
    device_smooth_image_gaussian(out->get(), g.dims, sigma_voxels, scratch_, stream_);
    return out;
  }

  // refine_inverses
  double refine_inverses(DeviceHalfWay& side, const rc::FieldGeometry& grid) {
    if (o_.final_inverse_iterations == 0) return 0.0;
    rc::InverseOptions tight;
    tight.max_iterations = o_.final_inverse_iterations;
    tight.max_residual_mm = o_.final_inverse_max_residual_mm;
    return device_invert_displacement_field(rc::view_of(grid, side.to_mid->get()), tight, side.from_mid->get(),
                                            side.from_mid->get(), scratch_, stream_)
        .max_residual_mm;
  }

  Buffer composed(const float* first, const float* second, const rc::FieldGeometry& grid) {
    Buffer out = device_floats(3 * rc::voxel_count(grid.dims));
    device_compose_first_then_second(rc::view_of(grid, first), rc::view_of(grid, second), out->get(), stream_);
    return out;
  }

  rc::DisplacementField field(const Buffer& b, const rc::FieldGeometry& grid) {
    return {grid, downloaded(b->get(), 3 * rc::voxel_count(grid.dims), stream_)};
  }

 private:
  const syn::SynOptions& o_;
  const DeviceSynMetric& metric_;
  const syn::SynObserver& observer_;
  cudaStream_t stream_;
  FieldScratch scratch_;
  Buffer total_;
};

// The moving image as DeviceSynCosts samples it: its own voxels (device) on the grid whose
// voxel_to_world is A^-1 times its own, so that warp_image, which samples the image at world
// point x + u(x), reads it at A(x + u(x)).
rp_image seen_through(const rp_image& moving, const float* voxels, const double* affine) {
  rp_image seen = moving;
  seen.data = voxels;
  if (affine == nullptr) return seen;
  double inverse[16];
  require(rc::invert_affine(affine, inverse), "the initial affine is singular");
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      double sum = 0.0;
      for (int k = 0; k < 4; ++k) sum += inverse[4 * r + k] * moving.voxel_to_world[4 * k + c];
      seen.voxel_to_world[4 * r + c] = sum;
    }
  return seen;
}

// DeviceSynCosts: `forward` on `grid` (the last level's), the images uploaded as they came.
DeviceSynCosts measured_costs(const rp_image& seen, const float* fixed, const float* mask, const float* forward,
                              const rc::FieldGeometry& grid, const rc::FieldGeometry& full,
                              const DeviceSynMetric& metric, cudaStream_t stream) {
  const std::size_t voxels = rc::voxel_count(full.dims);
  Buffer on_full;
  if (grid.dims.nx != full.dims.nx || grid.dims.ny != full.dims.ny || grid.dims.nz != full.dims.nz) {
    on_full = device_floats(3 * voxels);
    device_resample_field(rc::view_of(grid, forward), full, on_full->get(), stream);
    forward = on_full->get();
  }
  // Before: a zero field; one voxel of it is enough (outside its grid a field is zero too).
  rc::FieldGeometry one_voxel = full;
  one_voxel.dims = {1, 1, 1};
  const Buffer zero = device_floats(3);
  RP_CUDA_CHECK(cudaMemsetAsync(zero->get(), 0, 3 * sizeof(float), stream));
  const Buffer warped = device_floats(voxels);
  auto cost_through = [&](const rc::DisplacementFieldView& field) {
    device_warp_image(seen, field, full, 0.0f, warped->get(), stream);
    RP_CUDA_CHECK(cudaStreamSynchronize(stream));
    return metric(full, fixed, warped->get(), mask, nullptr, stream);
  };
  DeviceSynCosts costs;
  costs.before = cost_through(rc::view_of(one_voxel, zero->get()));
  costs.after = cost_through(rc::view_of(full, forward));
  return costs;
}

}  // namespace

syn::SynResult syn_register_device(const rp_image& fixed, const rp_image& moving, const rp_image* fixed_mask,
                                   const syn::SynOptions& options, const DeviceSynMetric& metric,
                                   const double* initial_affine, const syn::SynObserver& observer,
                                   cudaStream_t stream, const DeviceSynOutputs& outputs) {
  check_options(options);
  require(bool(metric), "no device metric");
  const rc::FieldGeometry full = syn::geometry_of(fixed);
  syn::geometry_of(moving);  // checks it
  if (fixed_mask != nullptr) {
    const rc::FieldGeometry mask_grid = syn::geometry_of(*fixed_mask);
    require(mask_grid.dims.nx == full.dims.nx && mask_grid.dims.ny == full.dims.ny &&
                mask_grid.dims.nz == full.dims.nz &&
                std::equal(full.voxel_to_world, full.voxel_to_world + 16, mask_grid.voxel_to_world),
            "the fixed mask's grid is not the fixed image's");
  }
  // The initial affine on the host, once, as the reference does it.
  std::vector<float> moving_through_affine;
  rp_image moving_input = moving;
  if (initial_affine) {
    rc::check_affine(initial_affine, "SyN initial affine");
    const rc::DisplacementField affine = rc::affine_as_field(initial_affine, full, options.execution);
    moving_through_affine = rc::warp_image(moving, rc::view_of(affine), full, 0.0f, options.execution);
    moving_input = syn::with_data(fixed, moving_through_affine);
  }
  const Buffer fixed_full = device_floats(rc::voxel_count(full.dims));
  fixed_full->upload(fixed.data, rc::voxel_count(full.dims), stream);
  const std::size_t moving_voxels = voxels_of(moving_input);
  const Buffer moving_full = device_floats(moving_voxels);
  moving_full->upload(moving_input.data, moving_voxels, stream);
  Buffer mask_full;
  if (fixed_mask != nullptr) {
    mask_full = device_floats(rc::voxel_count(full.dims));
    mask_full->upload(fixed_mask->data, rc::voxel_count(full.dims), stream);
  }

  Registration r(options, metric, observer, stream);
  syn::SynResult result;
  DeviceHalfWay fixed_side, moving_side;
  rc::FieldGeometry grid{};
  for (std::size_t l = 0; l < options.levels.size(); ++l) {
    const syn::SynLevel& level = options.levels[l];
    const rc::FieldGeometry next = syn::shrink_geometry(full, level.shrink_factor);
    fixed_side = l == 0 ? zero_half_way(next, stream) : resampled(fixed_side, grid, next, stream);
    moving_side = l == 0 ? zero_half_way(next, stream) : resampled(moving_side, grid, next, stream);
    grid = next;
    result.levels.push_back(
        r.run_level(int(l), level, grid, fixed, fixed_full, moving_input, moving_full, mask_full, fixed_mask,
                    fixed_side, moving_side));
  }
  result.inverse_max_residual_mm =
      std::max(r.refine_inverses(fixed_side, grid), r.refine_inverses(moving_side, grid));
  const Buffer forward = r.composed(fixed_side.to_mid->get(), moving_side.from_mid->get(), grid);
  if (outputs.costs != nullptr) {
    // moving_full holds the moving image's own voxels only where no affine resampled it.
    Buffer moving_own;
    if (initial_affine) {
      moving_own = device_floats(voxels_of(moving));
      moving_own->upload(moving.data, voxels_of(moving), stream);
    }
    const rp_image seen = seen_through(moving, (initial_affine ? moving_own : moving_full)->get(), initial_affine);
    *outputs.costs = measured_costs(seen, fixed_full->get(), mask_full ? mask_full->get() : nullptr, forward->get(), grid,
                            full, metric, stream);
  }
  result.forward = r.field(forward, grid);
  result.inverse = r.field(r.composed(moving_side.to_mid->get(), fixed_side.from_mid->get(), grid), grid);
  if (!outputs.half_way_fields) return result;
  result.mid_from_fixed = r.field(fixed_side.to_mid, grid);
  result.fixed_from_mid = r.field(fixed_side.from_mid, grid);
  result.mid_from_moving = r.field(moving_side.to_mid, grid);
  result.moving_from_mid = r.field(moving_side.from_mid, grid);
  return result;
}

}  // namespace regpipe_common_cuda
