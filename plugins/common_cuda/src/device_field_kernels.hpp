// Private to device_fields: the kernels' launch functions (device_fields.cu, C++17 under
// nvcc) behind the checked public API (device_fields.cpp, C++20).
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe_common_cuda::detail {

// Taps of one axis' Gaussian, by value in the kernel's parameters: sigma <= 25 voxels
// (kMaxFieldSigmaVoxels) needs about 85.
constexpr int kMaxFieldTaps = 128;

struct SmoothAxisParams {
  const float* in;
  float* out;
  regpipe_common::Grid dims;
  int components;  // floats per voxel: 3 (a field) or 1 (an image)
  int axis;        // 0 = x, 1 = y, 2 = z
  int radius;  // taps[0..radius]
  double taps[kMaxFieldTaps];
};

// Threads per block of the inversion pass; its partials hold 2 doubles per block.
constexpr int kInverseBlock = 256;
std::size_t inverse_pass_blocks(std::size_t voxels);

void launch_warp_image(const float* moving, regpipe_common::Grid moving_dims, const double world_to_moving[16],
                       const regpipe_common::DisplacementFieldView& field, const regpipe_common::FieldGeometry& output,
                       float background, float* out, cudaStream_t stream);
void launch_compose(const regpipe_common::DisplacementFieldView& first,
                    const regpipe_common::DisplacementFieldView& second, float* out, cudaStream_t stream);
void launch_resample(const regpipe_common::DisplacementFieldView& field, const regpipe_common::FieldGeometry& geometry,
                     float* out, cudaStream_t stream);
void launch_smooth_axis(const SmoothAxisParams& params, cudaStream_t stream);
// ants_smooth_field's last step: border planes 0, interior w * smoothed + (1 - w) * unsmoothed
// (unsmoothed read only when w < 1).
void launch_ants_border_and_blend(float* vectors, const float* unsmoothed, regpipe_common::Grid dims,
                                  double smoothed_weight, cudaStream_t stream);
// One fixed-point pass: next = -u(x + v(x)), and per block the largest and summed residual
// |v(x) + u(x + v(x))| into partials[2 b], partials[2 b + 1].
void launch_inverse_pass(const regpipe_common::DisplacementFieldView& u, const float* current, float* next,
                         double* partials, cudaStream_t stream);
// totals[0] = max of the blocks' maxima, totals[1] = sum of their sums (one block, fixed order).
void launch_reduce_residuals(const double* partials, std::size_t blocks, double* totals, cudaStream_t stream);

// The pieces of syn_update.hpp around the metric: v = -v; a warped mask's 0.5 threshold;
// scale_to_step as a per-block maximum of the vectors' norms in voxels (partials in the
// inversion's layout, for launch_reduce_residuals) and a scaling by step / totals[0] read on
// the device (no host round trip; a zero field stays zero).
void launch_negate(float* values, std::size_t count, cudaStream_t stream);
void launch_threshold_mask(float* values, std::size_t count, cudaStream_t stream);
void launch_voxel_norm_maxima(const float* vectors, std::size_t voxels, const double world_to_voxel[16],
                              double* partials, cudaStream_t stream);
void launch_scale_to_step(float* vectors, std::size_t voxels, const double* largest, double step_voxels,
                          cudaStream_t stream);

}  // namespace regpipe_common_cuda::detail
