// The parameters and the result of the greedy SyN optimizer (syn_registration.hpp), named
// after antsRegistration's so that a plugin can map its parameters one to one:
//   --transform SyN[gradientStep, updateFieldVarianceInVoxelSpace, totalFieldVarianceInVoxelSpace]
//   --metric CC[fixed, moving, weight, radius] | MeanSquares[...] | MI[fixed, moving, weight, bins]
//   --convergence [100x70x50x20, convergenceThreshold, convergenceWindowSize]
//   --shrink-factors 8x4x2x1 --smoothing-sigmas 3x2x1x0vox
#pragma once

#include <regpipe_common/dense_metrics/local_cc.hpp>
#include <regpipe_common/dense_metrics/mattes_mi.hpp>
#include <regpipe_common/execution.hpp>
#include <regpipe_common/fields/displacement_field.hpp>

#include <functional>
#include <span>
#include <vector>

namespace regpipe_common::syn {

enum class SynMetricKind { cc, mean_squares, mattes };

struct SynMetric {
  SynMetricKind kind = SynMetricKind::cc;
  dense_metrics::LocalCcOptions cc;         // box of radius 4 with ANTs' own-window gradient
  dense_metrics::MattesOptions mattes;      // 32 bins
};

// What SyN hands its metric at every evaluation: two images sampled on the level's virtual
// grid (x fastest) and the mask of the voxels that count.
struct SynMetricInput {
  const FieldGeometry& grid;
  std::span<const float> fixed;   // the side whose field is NOT updated by this gradient
  std::span<const float> moving;  // the image whose sampling points move (moving(x + u(x)))
  std::span<const float> mask;    // empty: every voxel counts; else 0/1 per voxel
};

// The metric as SyN sees it, the shape of abi.h's RP_EXT_DENSE_COST: returns the cost (lower is
// better) and writes d cost / d u(x) in cost per LPS world millimetre, 3 floats per voxel
// interleaved, into gradient_world (3 * voxels, zero where a voxel does not count). The
// metric derives the moving image's spatial gradient itself. Errors are thrown (rp::Error
// keeps its status). A plugin routes this through a cost component's evaluate_dense;
// builtin_metric (syn_update.hpp) makes one of SynMetric's kinds.
using SynMetricFunction = std::function<double(const SynMetricInput& input, std::span<float> gradient_world)>;

// One resolution level: its iteration limit, the virtual grid's shrink factor (of the fixed
// image's grid) and the Gaussian sigma both images are smoothed with at full resolution.
struct SynLevel {
  int iterations = 20;
  int shrink_factor = 1;
  double smoothing_sigma = 0.0;  // voxels of each image, or mm (SynOptions::smoothing_sigmas_in_mm)
};

struct SynOptions {
  // SyN[...]. The two variances are ITK GaussianOperator variances in voxels^2 (the field is
  // smoothed with sigma = sqrt(variance) voxels); the step is the largest update, in voxels.
  double gradient_step = 0.1;
  double update_field_variance_in_voxel_space = 3.0;
  double total_field_variance_in_voxel_space = 0.0;

  std::vector<SynLevel> levels{{100, 8, 3.0}, {70, 4, 2.0}, {50, 2, 1.0}, {20, 1, 0.0}};
  bool smoothing_sigmas_in_mm = false;  // ANTs' "vox" (its default) or "mm" suffix

  // --convergence [.., threshold, window]: a level stops once the convergence value (the
  // falling slope of the last `window` metric values, convergence_monitor.hpp) is below it.
  double convergence_threshold = 1e-6;
  int convergence_window_size = 10;

  SynMetric metric;
  // When set, SyN calls it for every metric evaluation instead of builtin_metric(metric).
  SynMetricFunction metric_function;

  // The fixed-point inversions of every iteration, as ANTs' SyN runs ITK's inverter: at most
  // 20 iterations, stopping at a max residual of 0.1 or a mean one of 0.001 voxels (of the
  // level's grid).
  int inverse_iterations = 20;
  double inverse_max_residual_voxels = 0.1;
  double inverse_mean_residual_voxels = 0.001;
  // Not in ANTs: after the last level the four half-way inverses are refined until the
  // max residual is at most this (mm) or `final_inverse_iterations` pass, so that the
  // forward and inverse warps written out are inverse to each other to that accuracy
  // rather than to the per-iteration 0.1 voxel. 0 iterations: ANTs' behaviour.
  int final_inverse_iterations = 100;
  double final_inverse_max_residual_mm = 0.001;

  Execution execution = Execution::parallel;
};

struct SynLevelReport {
  int shrink_factor = 1;
  Grid grid{0, 0, 0};                  // the level's virtual grid
  std::vector<double> metric_values;   // per iteration: the mean of the two sides' metric values
                                       // (lower is better), measured before that iteration's update
  std::vector<double> convergence_values;  // per iteration; +infinity until the window is full
  bool converged = false;              // stopped by the threshold, not the iteration limit
  double seconds = 0.0;
};

// Every field lives on the virtual grid of the last level (the fixed image's grid when its
// shrink factor is 1), world LPS mm, zero outside that grid (displacement_field.hpp).
// "moving space" is the moving image's world AFTER the initial affine A: the whole map from a
// fixed world point x to the moving image's world is A (x + forward(x))
// (compose_field_then_affine(forward, A)); antsApplyTransforms -t A.mat -t Warp.nii.gz does
// the same.
struct SynResult {
  // ANTs' *Warp.nii.gz: x -> x + forward(x) takes a fixed point to the moving-space point it
  // sees; warp_image(moving resampled through A, forward, fixed grid) is the registered image.
  DisplacementField forward;
  // ANTs' *InverseWarp.nii.gz: y -> y + inverse(y) takes a moving-space point to the fixed
  // point; it warps the fixed image onto the moving one.
  DisplacementField inverse;
  // The four half-way fields (ANTs' FixedToMiddle and MovingToMiddle transforms), named by
  // the points they move: mid_from_fixed takes a fixed point to the midpoint space, and so on.
  // forward = mid_from_fixed then moving_from_mid; inverse = mid_from_moving then fixed_from_mid.
  DisplacementField mid_from_fixed, fixed_from_mid, mid_from_moving, moving_from_mid;
  std::vector<SynLevelReport> levels;
  // The residual of the final half-way inversions, mm (max over the four).
  double inverse_max_residual_mm = 0.0;
};

}  // namespace regpipe_common::syn
