#include <regpipe_common/fields/composition.hpp>

#include "fill_field.hpp"

#include <regpipe_common/affine_checks.hpp>

namespace regpipe_common {
DisplacementField compose_first_then_second(const DisplacementFieldView& first,
                                            const DisplacementFieldView& second, Execution execution) {
  return fill_field(first.geometry, execution, [&](std::size_t i, Vec3 x) {
    const Vec3 u = vector_at(first, i);  // first is read at its own grid points
    return u + sample_displacement(second, x + u);
  });
}

DisplacementField compose_field_then_affine(const DisplacementFieldView& field, const double affine[16],
                                            Execution execution) {
  check_affine(affine, "affine composed with a displacement field");
  return fill_field(field.geometry, execution, [&](std::size_t i, Vec3 x) {
    return apply_affine(affine, x + vector_at(field, i)) - x;
  });
}

DisplacementField compose_affine_then_field(const double affine[16], const DisplacementFieldView& field,
                                            const FieldGeometry& geometry, Execution execution) {
  check_affine(affine, "affine composed with a displacement field");
  return fill_field(geometry, execution, [&](std::size_t, Vec3 x) {
    const Vec3 y = apply_affine(affine, x);
    return y + sample_displacement(field, y) - x;
  });
}

DisplacementField affine_as_field(const double affine[16], const FieldGeometry& geometry, Execution execution) {
  check_affine(affine, "affine turned into a displacement field");
  return fill_field(geometry, execution, [&](std::size_t, Vec3 x) { return apply_affine(affine, x) - x; });
}

}  // namespace regpipe_common
