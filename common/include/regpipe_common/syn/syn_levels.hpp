// The multi-resolution levels of SyN, as ITK's ImageRegistrationMethodv4 (antsRegistration)
// builds them: each level's virtual grid is the fixed image's grid shrunk by an integer factor,
// and both images are smoothed at their own full resolution. They are never downsampled on
// their own: every iteration samples the smoothed full-resolution images at the virtual grid's
// points through the current fields, so there is one interpolation, not two.
#pragma once

#include <regpipe_common/execution.hpp>
#include <regpipe_common/fields/displacement_field.hpp>

#include <regpipe/abi.h>

#include <vector>

namespace regpipe_common::syn {

// An image's grid as a field geometry. Throws rp::Error(RP_INVALID_ARGUMENT) for no voxels,
// no data or a voxel_to_world that is not an invertible finite affine.
FieldGeometry geometry_of(const rp_image& image);

// The grid shrunk by `factor` (>= 1) on every axis, as ITK's ShrinkImageFilter shrinks the
// virtual domain: floor(n / factor) voxels (at least 1) of `factor` times the spacing, along
// the same axes, with the grid's centre kept in place. Throws rp::Error(RP_INVALID_ARGUMENT)
// for a factor below 1.
FieldGeometry shrink_geometry(const FieldGeometry& full, int factor);

// A copy of the image's voxels smoothed by a discrete Gaussian of `sigma` voxels on every
// axis (in_mm false, ANTs' "vox") or `sigma` mm (in_mm true: sigma / spacing voxels per axis).
// sigma 0 copies. Throws rp::Error(RP_INVALID_ARGUMENT) for a negative or non-finite sigma.
std::vector<float> smoothed_image(const rp_image& image, double sigma, bool in_mm,
                                  Execution execution = Execution::parallel);

// A view of `data` on image's grid (the header of `image`, other voxels).
rp_image with_data(const rp_image& image, const std::vector<float>& data);

}  // namespace regpipe_common::syn
