// A displacement field carried onto another grid, as a multi-resolution registration moves its
// fields from one level's grid to the next (ITK's DisplacementFieldTransformParametersAdaptor,
// which ANTs' SyN uses between levels, resamples them the same way).
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

namespace regpipe_common {

// out(x) = field(x) at every grid point x of `geometry`: the trilinear sample, zero outside
// the field's grid (displacement_field.hpp). The vectors are world millimetres, so they need
// no rescaling when the voxel size changes. Throws rp::Error(RP_INVALID_ARGUMENT) for a bad
// geometry.
DisplacementField resample_field(const DisplacementFieldView& field, const FieldGeometry& geometry,
                                 Execution execution = Execution::parallel);

}  // namespace regpipe_common
