#include <regpipe_common/fields/resample_field.hpp>

#include "fill_field.hpp"

namespace regpipe_common {

DisplacementField resample_field(const DisplacementFieldView& field, const FieldGeometry& geometry,
                                 Execution execution) {
  return fill_field(geometry, execution, [&](std::size_t, Vec3 x) { return sample_displacement(field, x); });
}

}  // namespace regpipe_common
