// The CPU reference of ANTs' greedy symmetric normalization (SyN; Avants et al. 2008, Med
// Image Anal 12:26-41, section 2; ITK's SyNImageRegistrationMethod, which antsRegistration
// runs for --transform SyN[...]), built from the dense metrics (dense_metrics/) and the field
// operations (fields/). docs/deformable.md describes it and what differs from ANTs.
//
// Both images are pulled half way: the fixed image through fixed_from_mid, the moving image
// through moving_from_mid, onto the level's virtual grid (the fixed grid shrunk). Per
// iteration:
//   1. F_mid(x) = F(x + fixed_from_mid(x)), M_mid(x) = M(x + moving_from_mid(x)) (smoothed
//      full-resolution images, trilinear, 0 outside);
//   2. d_F = metric descent with F_mid as fixed and M_mid as moving (syn_update.hpp),
//      d_M = the same with the roles swapped; each is smoothed with the update variance and
//      scaled so its largest vector is gradient_step voxels;
//   3. mid_from_fixed <- mid_from_fixed then d_F, mid_from_moving <- mid_from_moving then d_M
//      (compose_first_then_second), each smoothed with the total variance. Pushing the
//      midpoint of a fixed point along d_F moves F_mid by d_F, which to first order lowers the
//      metric as pulling M_mid by d_F does: this is ANTs' pairing, each image's update
//      computed from the other image's gradient;
//   4. fixed_from_mid = inverse of mid_from_fixed (warm start: the previous one), then
//      mid_from_fixed = inverse of that (warm start: the composed field), as ANTs does, so
//      the pair stays inverse to each other; the same for the moving pair;
//   5. the metric value (the mean of the two sides', measured in step 2) goes to the
//      convergence monitor; the level ends at its iteration count or when the monitor's value
//      drops below the threshold.
// Between levels the four fields are resampled onto the next virtual grid (resample_field).
// At the end forward = mid_from_fixed then moving_from_mid and inverse = mid_from_moving then
// fixed_from_mid (syn_options.hpp states which point each maps).
#pragma once

#include <regpipe_common/syn/syn_options.hpp>

#include <regpipe/abi.h>

#include <functional>

namespace regpipe_common::syn {

// Called after every iteration with the level (0 = coarsest), the iteration (0-based) and the
// metric value; returning false stops the registration with rp::Error(RP_CANCELLED) (a
// plugin's should_cancel).
using SynObserver = std::function<bool(int level, int iteration, double metric_value)>;

// Registers `moving` onto `fixed` (both in LPS world mm, any grids). `initial_affine`, when
// not null, is a row-major 4x4 taking fixed (reference) world points to moving world points
// (regpipe's convention, abi.h; docs/coordinates.md): the moving image is first resampled
// through it onto the fixed grid (trilinear, 0 outside), and SyN registers that image, so the
// whole fixed -> moving map is x -> A (x + forward(x)). Throws rp::Error(RP_INVALID_ARGUMENT)
// naming the bad option or input.
SynResult syn_register(const rp_image& fixed, const rp_image& moving, const SynOptions& options,
                       const double* initial_affine = nullptr, const SynObserver& observer = {});

// The same with a mask of the fixed image (nullable; on the fixed grid, voxels > 0 count): at
// every iteration it is pulled into the midpoint space with the fixed image (trilinear, then
// >= 0.5 counts) and given to both of the iteration's metric evaluations, so only points whose
// fixed-side position lies in the mask drive the fields (as an ITK v4 metric's fixed mask,
// checked at each virtual point). Throws rp::Error(RP_INVALID_ARGUMENT) for a mask whose grid
// is not the fixed image's.
SynResult syn_register(const rp_image& fixed, const rp_image& moving, const rp_image* fixed_mask,
                       const SynOptions& options, const double* initial_affine = nullptr,
                       const SynObserver& observer = {});

}  // namespace regpipe_common::syn
