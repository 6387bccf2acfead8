// Images resampled through a chain of transforms that holds displacement fields (`regpipe
// apply` with a *Warp.nii.gz in its -t chain), on the CPU. Chains of affines alone keep the
// resampler plugins' path (resample_image.hpp): their product is one matrix.
//
// The chain is in regpipe's order (docs/apply.md): the order the image goes through it, input
// space first; step k maps points of space k to space k-1, so the output is
//   out(p) = input(T_1(T_2(... T_n(p)))),   p a voxel centre of the output grid (space n),
// where an affine step is its ref_to_mov matrix and a field step is x -> x + u(x), u sampled
// trilinearly and zero outside the field's grid (regpipe_common::sample_displacement), as
// ITK's DisplacementFieldTransform and so antsApplyTransforms read it.
#pragma once

#include <regpipe/host/image.hpp>
#include <regpipe/host/resample_image.hpp>

#include <regpipe_common/fields/displacement_field.hpp>

#include <Eigen/Core>
#include <array>
#include <memory>
#include <vector>

namespace regpipe {

// One step of a chain: a displacement field when `field` is set, else the affine ref_to_mov
// (reference LPS world -> moving LPS world).
struct ChainStep {
  Eigen::Matrix4d ref_to_mov = Eigen::Matrix4d::Identity();
  std::shared_ptr<const regpipe_common::DisplacementField> field;
};

// Where each voxel of an output grid samples the input: input voxel coordinates, 3 floats
// per output voxel, x fastest. Computed once and used for every volume of a series.
struct SamplePositions {
  std::array<uint32_t, 3> dims{0, 0, 0};  // the output grid's
  std::vector<float> xyz;
};

// The chain composed exactly on the host for every voxel centre of `grid`: consecutive
// affines multiplied into one matrix, fields sampled at the points the steps after them (in
// the point's order) bring. The positions are in the voxel coordinates of `input_grid` (its
// voxel_to_world), moved onto its sampling domain [0, n-1] when within 1e-6 voxel of it, as
// resample.cpu does. Throws UserError for a singular input voxel-to-world matrix.
SamplePositions chain_sample_positions(const std::vector<ChainStep>& chain, const Image& grid,
                                       const Image& input_grid);

// `input` sampled at `positions` onto `grid` (its dims, voxel_to_world and NIfTI header; the
// input's file_type), 0 outside the input's sampling domain [0, n-1]^3. Interpolation as
// resample.cpu computes it at a position (nearest, trilinear, sinc with its default radius 4,
// cubic B-spline with mirror boundaries) or resample_labels' label rule.
Image resample_at_positions(const Image& input, const Image& grid, const SamplePositions& positions,
                            Interpolation interpolation);

}  // namespace regpipe
