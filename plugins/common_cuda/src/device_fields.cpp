// The checked entry points of the device field operations (device_fields.hpp): the reference's
// argument checks and messages, then the launches of device_fields.cu.
#include "regpipe_common_cuda/device_fields.hpp"

#include "device_field_kernels.hpp"

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>

#include <regpipe/plugin.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace regpipe_common_cuda {
namespace {

using regpipe_common::DisplacementFieldView;
using regpipe_common::FieldGeometry;
using regpipe_common::Grid;

void require_vectors(const void* p, const char* what) {
  if (p == nullptr) throw rp::Error(RP_INVALID_ARGUMENT, std::string(what) + " is a null device pointer");
}

void check_view(const DisplacementFieldView& f, const char* what) {
  regpipe_common::check_field_geometry(f.geometry);
  require_vectors(f.vectors, what);
}

// smooth_axis over the axes with a positive sigma, in order x, y, z, ping-ponging between the
// data and the scratch buffer; the result copied back when it ends in the scratch.
void smooth_axes(float* data, const Grid& g, int components, const double sigma_voxels[3], FieldScratch& scratch,
                 cudaStream_t stream) {
  const std::size_t floats = std::size_t(components) * regpipe_common::voxel_count(g);
  scratch.vectors.ensure(floats);
  const int n[3] = {g.nx, g.ny, g.nz};
  float* from = data;
  float* to = scratch.vectors.get();
  for (int axis = 0; axis < 3; ++axis) {
    if (!(sigma_voxels[axis] > 0.0)) continue;
    const std::vector<double> w = regpipe_common::discrete_gaussian_taps(sigma_voxels[axis], n[axis]);
    if (w.size() > std::size_t(detail::kMaxFieldTaps))
      throw rp::Error(RP_INTERNAL, "device smoothing: sigma " + std::to_string(sigma_voxels[axis]) + " needs " +
                                       std::to_string(w.size()) + " taps, more than " +
                                       std::to_string(detail::kMaxFieldTaps));
    detail::SmoothAxisParams p{from, to, g, components, axis, int(w.size()) - 1, {}};
    for (std::size_t k = 0; k < w.size(); ++k) p.taps[k] = w[k];
    detail::launch_smooth_axis(p, stream);
    std::swap(from, to);
  }
  if (from != data)
    RP_CUDA_CHECK(cudaMemcpyAsync(data, from, floats * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

void check_sigma(double sigma_voxels, const char* what) {
  if (!(sigma_voxels >= 0.0 && sigma_voxels <= regpipe_common::kMaxFieldSigmaVoxels))
    throw rp::Error(RP_INVALID_ARGUMENT, std::string(what) + " smoothing sigma " + std::to_string(sigma_voxels) +
                                             " voxels is outside [0, " +
                                             std::to_string(regpipe_common::kMaxFieldSigmaVoxels) + "]");
}

}  // namespace

void device_warp_image(const rp_image& moving, const DisplacementFieldView& field, const FieldGeometry& output,
                       float background, float* out, cudaStream_t stream) {
  if (moving.dims[0] < 1 || moving.dims[1] < 1 || moving.dims[2] < 1 || !moving.data)
    throw rp::Error(RP_INVALID_ARGUMENT, "the image warped through a field has no voxels");
  regpipe_common::check_affine(moving.voxel_to_world, "voxel_to_world of the image warped through a field");
  regpipe_common::check_field_geometry(output);
  check_view(field, "the field an image is warped through");
  require_vectors(out, "the warped image's output");
  double world_to_moving[16];
  regpipe_common::invert_affine(moving.voxel_to_world, world_to_moving);
  const Grid mg{int(moving.dims[0]), int(moving.dims[1]), int(moving.dims[2])};
  detail::launch_warp_image(moving.data, mg, world_to_moving, field, output, background, out, stream);
}

void device_compose_first_then_second(const DisplacementFieldView& first, const DisplacementFieldView& second,
                                      float* out, cudaStream_t stream) {
  check_view(first, "the first field of a composition");
  check_view(second, "the second field of a composition");
  require_vectors(out, "the composed field's output");
  if (out == first.vectors || out == second.vectors)
    throw rp::Error(RP_INVALID_ARGUMENT, "device field composition: the output aliases an input");
  detail::launch_compose(first, second, out, stream);
}

void device_resample_field(const DisplacementFieldView& field, const FieldGeometry& geometry, float* out,
                           cudaStream_t stream) {
  check_view(field, "the resampled field");
  regpipe_common::check_field_geometry(geometry);
  require_vectors(out, "the resampled field's output");
  if (out == field.vectors)
    throw rp::Error(RP_INVALID_ARGUMENT, "device field resampling: the output aliases the input");
  detail::launch_resample(field, geometry, out, stream);
}

void device_smooth_field_gaussian(float* vectors, const FieldGeometry& geometry, double sigma_voxels,
                                  FieldScratch& scratch, cudaStream_t stream) {
  check_sigma(sigma_voxels, "field");
  if (sigma_voxels == 0.0) return;
  regpipe_common::check_field_geometry(geometry);
  require_vectors(vectors, "the smoothed field");
  const double sigmas[3] = {sigma_voxels, sigma_voxels, sigma_voxels};
  smooth_axes(vectors, geometry.dims, 3, sigmas, scratch, stream);
}

void device_smooth_image_gaussian(float* image, const Grid& dims, const double sigma_voxels[3], FieldScratch& scratch,
                                  cudaStream_t stream) {
  for (int axis = 0; axis < 3; ++axis) check_sigma(sigma_voxels[axis], "image");
  if (dims.nx < 1 || dims.ny < 1 || dims.nz < 1)
    throw rp::Error(RP_INVALID_ARGUMENT, "image smoothing: a grid of " + std::to_string(dims.nx) + "x" +
                                             std::to_string(dims.ny) + "x" + std::to_string(dims.nz));
  require_vectors(image, "the smoothed image");
  smooth_axes(image, dims, 1, sigma_voxels, scratch, stream);
}

void device_ants_smooth_field(float* vectors, const FieldGeometry& geometry, double variance_voxels,
                              FieldScratch& scratch, cudaStream_t stream) {
  if (!(variance_voxels > 0.0)) return;
  const double sigma = std::sqrt(variance_voxels);
  const double smoothed_weight = variance_voxels < 0.5 ? 1.0 - variance_voxels / 0.5 : 1.0;
  const float* unsmoothed = nullptr;
  if (smoothed_weight < 1.0) {
    regpipe_common::check_field_geometry(geometry);
    require_vectors(vectors, "the smoothed field");
    const std::size_t floats = 3 * regpipe_common::voxel_count(geometry.dims);
    scratch.unsmoothed.ensure(floats);
    RP_CUDA_CHECK(cudaMemcpyAsync(scratch.unsmoothed.get(), vectors, floats * sizeof(float),
                                  cudaMemcpyDeviceToDevice, stream));
    unsmoothed = scratch.unsmoothed.get();
  }
  device_smooth_field_gaussian(vectors, geometry, sigma, scratch, stream);
  detail::launch_ants_border_and_blend(vectors, unsmoothed, geometry.dims, smoothed_weight, stream);
}

void device_scale_to_step(float* vectors, const FieldGeometry& geometry, double step_voxels, FieldScratch& scratch,
                          cudaStream_t stream) {
  require_vectors(vectors, "the field scaled to a step");
  const DisplacementFieldView view = regpipe_common::view_of(geometry, vectors);  // checks the geometry
  const std::size_t voxels = regpipe_common::voxel_count(geometry.dims);
  const std::size_t blocks = detail::inverse_pass_blocks(voxels);
  scratch.partials.ensure(2 * blocks + 2);
  double* totals = scratch.partials.get() + 2 * blocks;
  detail::launch_voxel_norm_maxima(vectors, voxels, view.world_to_voxel, scratch.partials.get(), stream);
  detail::launch_reduce_residuals(scratch.partials.get(), blocks, totals, stream);
  detail::launch_scale_to_step(vectors, voxels, totals, step_voxels, stream);
}

DeviceInverseResult device_invert_displacement_field(const DisplacementFieldView& u,
                                                     const regpipe_common::InverseOptions& options,
                                                     const float* initial_guess, float* inverse,
                                                     FieldScratch& scratch, cudaStream_t stream) {
  regpipe_common::check_inverse_options(options);
  check_view(u, "the inverted field");
  require_vectors(inverse, "the inverse's output");
  if (inverse == u.vectors)
    throw rp::Error(RP_INVALID_ARGUMENT, "device field inversion: the inverse aliases the inverted field");

  const std::size_t voxels = regpipe_common::voxel_count(u.geometry.dims);
  const std::size_t bytes = 3 * voxels * sizeof(float);
  const std::size_t blocks = detail::inverse_pass_blocks(voxels);
  scratch.vectors.ensure(3 * voxels);
  scratch.partials.ensure(2 * blocks + 2);
  double* totals = scratch.partials.get() + 2 * blocks;
  if (initial_guess == nullptr)
    RP_CUDA_CHECK(cudaMemsetAsync(inverse, 0, bytes, stream));
  else if (initial_guess != inverse)
    RP_CUDA_CHECK(cudaMemcpyAsync(inverse, initial_guess, bytes, cudaMemcpyDeviceToDevice, stream));

  // `current` holds the iterate the result reports; the passes alternate between the two buffers.
  float* current = inverse;
  float* next = scratch.vectors.get();
  DeviceInverseResult result;
  for (;;) {
    detail::launch_inverse_pass(u, current, next, scratch.partials.get(), stream);
    detail::launch_reduce_residuals(scratch.partials.get(), blocks, totals, stream);
    double host_totals[2] = {0.0, 0.0};
    RP_CUDA_CHECK(cudaMemcpyAsync(host_totals, totals, sizeof host_totals, cudaMemcpyDeviceToHost, stream));
    RP_CUDA_CHECK(cudaStreamSynchronize(stream));
    result.max_residual_mm = host_totals[0];
    result.mean_residual_mm = host_totals[1] / double(voxels);
    result.converged = result.max_residual_mm <= options.max_residual_mm ||
                       (options.mean_residual_mm > 0.0 && result.mean_residual_mm <= options.mean_residual_mm);
    if ((result.converged && result.iterations >= options.min_iterations) ||
        result.iterations == options.max_iterations)
      break;
    std::swap(current, next);
    ++result.iterations;
  }
  if (current != inverse)
    RP_CUDA_CHECK(cudaMemcpyAsync(inverse, current, bytes, cudaMemcpyDeviceToDevice, stream));
  return result;
}

}  // namespace regpipe_common_cuda
