// Composition of displacement fields with each other and with affines. Names give the order
// in which a POINT travels through the maps: "first_then_second" maps x to x + first(x), then
// that point y to y + second(y). In the notation of issue 16, (u o v)(x) = v(x) + u(x + v(x))
// is compose_first_then_second(v, u). Affines are row-major 4x4 world -> world (LPS mm).
// Each result lives on a stated grid; sampling is trilinear, zero outside a field's grid
// (displacement_field.hpp).
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

namespace regpipe_common {

// out(x) = first(x) + second(x + first(x)), on first's grid.
DisplacementField compose_first_then_second(const DisplacementFieldView& first,
                                            const DisplacementFieldView& second,
                                            Execution execution = Execution::parallel);

// out(x) = A (x + field(x)) - x, on field's grid: the map x -> A(x + u(x)). This is how
// antsApplyTransforms chains "-t Warp.nii.gz -t Affine.mat" (the warp lives in the space the
// affine maps to the moving image from).
DisplacementField compose_field_then_affine(const DisplacementFieldView& field, const double affine[16],
                                            Execution execution = Execution::parallel);

// out(x) = A x + field(A x) - x, on `geometry`: the map x -> y + u(y), y = A x.
DisplacementField compose_affine_then_field(const double affine[16], const DisplacementFieldView& field,
                                            const FieldGeometry& geometry,
                                            Execution execution = Execution::parallel);

// out(x) = A x - x, on `geometry`: an affine as a displacement field.
DisplacementField affine_as_field(const double affine[16], const FieldGeometry& geometry,
                                  Execution execution = Execution::parallel);

}  // namespace regpipe_common
