// Gaussian smoothing of a displacement (or velocity) field, SyN's regulariser.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

#include <span>
#include <vector>

namespace regpipe_common {

// The largest sigma accepted: the discrete kernel's Bessel terms overflow a double beyond
// t = sigma^2 of about 700, and no field regulariser needs a kernel this wide.
constexpr double kMaxFieldSigmaVoxels = 25.0;

// Taps w[0..radius] of the symmetric discrete Gaussian smooth_field_gaussian and
// smooth_image_gaussian convolve with along an axis of `axis_length` voxels (described
// below), normalised over [-radius, radius]: exported so that the CUDA field smoothing
// (plugins/common_cuda, device_fields.hpp) uses the very same taps.
std::vector<double> discrete_gaussian_taps(double sigma_voxels, int axis_length);

// Smooths each vector component separably along the voxel axes with the same sigma, in
// voxels (index space, as ANTs does). NOTE: ANTs' SyN[step, a, b] hands a and b to
// itk::GaussianOperator as VARIANCES in voxels^2, so ANTs' SyN[0.1, 3, 0] is sigma_voxels =
// sqrt(3) here. The kernel is the discrete Gaussian exp(-t) I_n(t), t = sigma^2 (Lindeberg's
// scale-space kernel, which ITK's GaussianOperator uses too), cut where both tails together
// hold less than 0.001 of the mass (SyN's MaximumError) or at the axis length, normalised to
// sum 1. Beyond an edge the edge vector repeats (ITK's default zero-flux Neumann condition),
// so a constant field stays constant. sigma 0 leaves the field as it is; a negative,
// non-finite or larger than kMaxFieldSigmaVoxels sigma throws rp::Error(RP_INVALID_ARGUMENT).
// Not done here (SyN's own step): ANTs then zeroes the border planes of the smoothed field.
void smooth_field_gaussian(DisplacementField& field, double sigma_voxels,
                           Execution execution = Execution::parallel);

// The same discrete Gaussian on a scalar image (x fastest), with a sigma per axis in voxels (0:
// that axis untouched), edges repeated as above: the per-level smoothing of a multi-resolution
// registration (ITK's DiscreteGaussianImageFilter, which ANTs uses for its smoothing sigmas,
// has the same kernel and boundary; it cuts the tails at 0.01 of the mass by default, here
// 0.001). Throws rp::Error(RP_INVALID_ARGUMENT) for a sigma outside [0,
// kMaxFieldSigmaVoxels] or an image that does not fill `dims`.
void smooth_image_gaussian(std::span<float> image, const Grid& dims, const double sigma_voxels[3],
                           Execution execution = Execution::parallel);

}  // namespace regpipe_common
