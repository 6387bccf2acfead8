// Jacobian determinant of the map x -> x + u(x): where it is not positive the warp folds.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

#include <vector>

namespace regpipe_common {

struct JacobianDeterminants {
  std::vector<float> per_voxel;  // on the field's grid, x fastest (a map for pictures)
  double min = 0.0, max = 0.0;
  double fraction_negative = 0.0;  // of the voxels with det < 0
};

// det(I + du/dx) with du/dx in world mm: derivatives of the stored vectors along each voxel
// axis by central differences (one-sided at the first and last plane, zero along a flat axis
// of one voxel), turned into world derivatives through the inverse of voxel_to_world's
// linear part. Exact for an affine displacement up to float rounding of the stored vectors.
JacobianDeterminants jacobian_determinants(const DisplacementFieldView& field,
                                           Execution execution = Execution::parallel);

}  // namespace regpipe_common
