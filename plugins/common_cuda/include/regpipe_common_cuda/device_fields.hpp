// The displacement-field operations of greedy SyN's iteration on the GPU (issue 16, item 3:
// whole iterations on the device): each the CUDA twin of its CPU reference in
// regpipe_common/fields/ (and syn/syn_update.hpp for ANTs' smoothing), with the same formulas
// — the __host__ __device__ sampling of displacement_field.hpp (sample_displacement,
// world_of_voxel, apply_affine) and voxel_map.hpp's trilinear — in double where the reference
// computes in double, results stored as float. device_fields.cu is compiled without fused
// multiply-adds (--fmad=false), so per voxel the device does the reference's arithmetic.
//
// Conventions: every `vectors`/`data` pointer here is a DEVICE address (cudaMalloc) on the
// current device, laid out as the host fields (3 interleaved floats per voxel, x fastest); a
// DisplacementFieldView from regpipe_common::view_of(geometry, device_pointer) describes one
// (view_of only reads the geometry). All work is queued on `stream`; the functions return
// without synchronising, except the inversion, which reads two residuals back per update (its
// stopping rule). Outputs must not alias inputs unless stated. Errors throw rp::Error
// (RP_INVALID_ARGUMENT as the reference's checks, RP_DEVICE / RP_OUT_OF_MEMORY from CUDA).
// Deterministic: no atomics; the inversion's residual sums are reduced in a fixed order (not
// the CPU's plane order, so the mean residual may differ from the reference's in its last bits).
#pragma once

#include "regpipe_common_cuda/device_buffer.hpp"

#include <regpipe/abi.h>
#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/inverse.hpp>

#include <cuda_runtime.h>

namespace regpipe_common_cuda {

// Reused device memory of the field operations (grown on demand, never shrunk).
struct FieldScratch {
  DeviceBuffer<float> vectors;    // a field's worth: smoothing's ping-pong, the inversion's iterate
  DeviceBuffer<float> unsmoothed; // ants_smooth_field's copy of its input
  DeviceBuffer<double> partials;  // per-block residual maxima and sums, then the two totals
};

// regpipe_common::warp_image: out(x) = moving(x + u(x)) on `output` (voxel_count floats at
// `out`), moving.data a device address; `background` outside moving's sampling domain.
void device_warp_image(const rp_image& moving, const regpipe_common::DisplacementFieldView& field,
                       const regpipe_common::FieldGeometry& output, float background, float* out,
                       cudaStream_t stream);

// regpipe_common::compose_first_then_second: out(x) = first(x) + second(x + first(x)) on
// first's grid. `out` may not alias either input.
void device_compose_first_then_second(const regpipe_common::DisplacementFieldView& first,
                                      const regpipe_common::DisplacementFieldView& second, float* out,
                                      cudaStream_t stream);

// regpipe_common::resample_field: out(x) = field(x) at each grid point of `geometry`.
void device_resample_field(const regpipe_common::DisplacementFieldView& field,
                           const regpipe_common::FieldGeometry& geometry, float* out, cudaStream_t stream);

// regpipe_common::smooth_field_gaussian, in place on `vectors` (a field on `geometry`): the
// same taps (discrete_gaussian_taps), axes x, y, z in turn, sums in double in the same tap
// order, the edge vector repeated beyond an edge, float after each axis. Same sigma checks.
void device_smooth_field_gaussian(float* vectors, const regpipe_common::FieldGeometry& geometry,
                                  double sigma_voxels, FieldScratch& scratch, cudaStream_t stream);

// regpipe_common::smooth_image_gaussian on an image in device memory (1 float per voxel of
// `dims`), in place: the same taps per axis (sigma 0: that axis untouched), the same checks.
// SyN's per-level image smoothing (syn::smoothed_image) on the device.
void device_smooth_image_gaussian(float* image, const regpipe_common::Grid& dims, const double sigma_voxels[3],
                                  FieldScratch& scratch, cudaStream_t stream);

// regpipe_common::syn::ants_smooth_field (ANTs' GaussianSmoothDisplacementField), in place:
// variance <= 0 leaves the field; otherwise the smoothing above with sigma = sqrt(variance),
// border planes zeroed, and below a variance of 0.5 the interior blended with the unsmoothed
// field exactly as the reference does.
void device_ants_smooth_field(float* vectors, const regpipe_common::FieldGeometry& geometry,
                              double variance_voxels, FieldScratch& scratch, cudaStream_t stream);

// regpipe_common::syn::scale_to_step, in place: scaled so that the largest vector, in voxels
// of the grid, is `step_voxels` long (a zero field stays zero). The largest norm is reduced and
// applied on the device (no host round trip), so it is not returned.
void device_scale_to_step(float* vectors, const regpipe_common::FieldGeometry& geometry, double step_voxels,
                          FieldScratch& scratch, cudaStream_t stream);

// What regpipe_common::invert_displacement_field reports, less the field (in `inverse`).
struct DeviceInverseResult {
  int iterations = 0;
  double max_residual_mm = 0.0;
  double mean_residual_mm = 0.0;
  bool converged = false;
};

// regpipe_common::invert_displacement_field: the fixed-point iteration v <- -u(x + v(x))
// (Jacobi), the same stopping rules (max residual, mean residual when > 0, min and max
// iterations) tested after each pass, so the same iteration count as the reference up to a
// residual within rounding of a tolerance. The inverse (on u's grid) is written to `inverse`;
// `initial_guess` is a device field on u's grid, null for zero, and MAY be `inverse` itself
// (a warm start in place, as SyN keeps its inverses). Synchronises `stream` once per pass to
// read the two residuals. Same option checks as the reference (rp::Error RP_INVALID_ARGUMENT).
DeviceInverseResult device_invert_displacement_field(const regpipe_common::DisplacementFieldView& u,
                                                     const regpipe_common::InverseOptions& options,
                                                     const float* initial_guess, float* inverse,
                                                     FieldScratch& scratch, cudaStream_t stream);

}  // namespace regpipe_common_cuda
