// Greedy SyN with its fields in device memory: regpipe_common::syn::syn_register's loop
// (syn_registration.hpp describes the steps) with every per-iteration field operation on the
// GPU (device_fields.hpp) and the metric handed device images (e.g. a cost's
// RP_EXT_DENSE_COST with RP_MEMORY_DEVICE). Per iteration the host only sees the metric values
// (the convergence monitor and the observer) and, inside each fixed-point inversion, two
// residuals per pass (the stopping rule). The two images are uploaded once and smoothed per
// level on the device (syn::smoothed_image's taps, device_smooth_image_gaussian); the initial
// affine is applied on the host once; the result's fields are downloaded at the end.
//
// With a metric that computes what the reference's does, the result is the reference's: every
// device operation reproduces its CPU reference bit for bit on an H200
// (tests/gpu/device_fields_cuda_test.cpp, device_syn_cuda_test.cpp).
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/syn/syn_options.hpp>
#include <regpipe_common/syn/syn_registration.hpp>

#include <regpipe/abi.h>

#include <cuda_runtime.h>

#include <functional>

namespace regpipe_common_cuda {

// The metric between two images on `grid` in device memory (voxel_count floats each; `mask`
// null or 0/1 per voxel), its value returned and its gradient with respect to the moving
// image's sampling displacement, in world LPS mm per voxel, written to `gradient_world` (3 per
// voxel, device; zero where a voxel does not count) — a SynMetricFunction on device memory.
// `gradient_world` null: the value alone (DeviceSynCosts' evaluations).
// `stream` has been synchronised when it is called (the images are complete); its own work may
// go on `stream` or any stream it has finished when it returns (a cost's evaluate_dense does:
// it returns the value to host memory).
using DeviceSynMetric = std::function<double(const regpipe_common::FieldGeometry& grid, const float* fixed,
                                             const float* moving, const float* mask, float* gradient_world,
                                             cudaStream_t stream)>;

// The metric's value of the fixed image (with the fixed mask) and the moving image resampled
// once from its own grid onto the fixed one (trilinear, 0 outside, as warp_image samples)
// through the initial affine A alone (before) and through the result, x -> A(x + forward(x))
// (after): what a host reports as a deformable stage's cost before and after it (abi.h 1.7's
// cost_before_out and cost_after_out), measured where the images already are.
struct DeviceSynCosts {
  double before = 0.0, after = 0.0;
};

// What syn_register_device hands back besides the forward and inverse warps.
struct DeviceSynOutputs {
  // The four half-way fields downloaded into the result (the reference's comparison needs them;
  // a registration that keeps only the warps saves four full-resolution downloads).
  bool half_way_fields = true;
  DeviceSynCosts* costs = nullptr;  // measured when set
};

// syn_register(fixed, moving, fixed_mask, options, initial_affine, observer) with `metric` in
// place of options.metric / metric_function (ignored here). Images in host memory. The same
// errors (rp::Error RP_INVALID_ARGUMENT naming the option or input, RP_CANCELLED from the
// observer), plus RP_DEVICE / RP_OUT_OF_MEMORY from CUDA. Runs on `stream` of the current
// device. `outputs` says which of the half-way fields and DeviceSynCosts to hand back (the
// costs: two more metric evaluations, no gradient).
regpipe_common::syn::SynResult syn_register_device(const rp_image& fixed, const rp_image& moving,
                                                   const rp_image* fixed_mask,
                                                   const regpipe_common::syn::SynOptions& options,
                                                   const DeviceSynMetric& metric, const double* initial_affine,
                                                   const regpipe_common::syn::SynObserver& observer,
                                                   cudaStream_t stream, const DeviceSynOutputs& outputs = {});

}  // namespace regpipe_common_cuda
