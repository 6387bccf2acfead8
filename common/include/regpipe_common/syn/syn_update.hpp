// The pieces of one SyN iteration on a level's virtual grid, as ITK's
// SyNImageRegistrationMethod (ANTs' SyN) computes them: the metric's descent direction, the
// Gaussian smoothing of update and total fields with ANTs' border rule, and the step scaling.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/syn/syn_options.hpp>

#include <span>

namespace regpipe_common::syn {

struct MetricDescent {
  double value = 0.0;           // the metric (lower is better)
  DisplacementField direction;  // -d metric / d u: world LPS mm per voxel, on the grid
};

// One of SynMetric's built-in kinds as a SynMetricFunction: the dense metric (dense_metrics/)
// with moving's central-difference gradient, the mask as its 0/1 weight, and its gradient
// along the grid's unit axes turned into LPS world (dense_metrics/world_gradient.hpp).
SynMetricFunction builtin_metric(const SynMetric& metric, Execution execution = Execution::parallel);

// The metric between two images already sampled on `grid` (x fastest), and its descent
// direction for the sampling displacement u of `moving` (moving(x + u(x))): minus the
// metric's world gradient. This is ITK's v4 metric derivative (the negative gradient) that
// SyN composes into the OTHER image's half-way field (see syn_registration.hpp). `mask`:
// empty, or 0/1 per voxel.
MetricDescent metric_descent(const FieldGeometry& grid, std::span<const float> fixed, std::span<const float> moving,
                             std::span<const float> mask, const SynMetricFunction& metric,
                             Execution execution = Execution::parallel);
// The same with a built-in kind and no mask.
MetricDescent metric_descent(const FieldGeometry& grid, std::span<const float> fixed, std::span<const float> moving,
                             const SynMetric& metric, Execution execution = Execution::parallel);

// ANTs' GaussianSmoothDisplacementField(field, variance): variance <= 0 leaves the field
// as it is; otherwise smooth_field_gaussian with sigma = sqrt(variance) voxels, then the
// border planes are set to zero (the warp keeps the grid's faces in place) and, for a
// variance below 0.5, the interior is blended back towards the unsmoothed field:
// (1 - variance / 0.5) smoothed + (variance / 0.5) unsmoothed. That blend is ANTs' as written
// (the weight of the smoothed field falls towards 0 as the variance rises to 0.5, then jumps
// to 1); kept so that small variances behave as in ANTs.
void ants_smooth_field(DisplacementField& field, double variance_voxels, Execution execution = Execution::parallel);

// ANTs' ScaleUpdateField: multiplies the field so that its largest vector, measured in voxels
// of its grid, is `step_voxels` long (gradientStep). A zero field stays zero. Returns the
// largest norm before scaling, in voxels.
double scale_to_step(DisplacementField& field, double step_voxels);

}  // namespace regpipe_common::syn
