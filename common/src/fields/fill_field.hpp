// Private to the field operations: a field on `geometry` whose vector at each grid point x is
// displacement_at(x, world point of x), computed plane by plane (field_execution.hpp).
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

namespace regpipe_common {

template <class DisplacementAt>
DisplacementField fill_field(const FieldGeometry& geometry, Execution execution,
                             const DisplacementAt& displacement_at) {
  DisplacementField out = zero_field(geometry);
  const Grid& g = geometry.dims;
  for_each_plane(g.nz, execution, [&](int z) {
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = std::size_t(x) + std::size_t(g.nx) * (std::size_t(y) + std::size_t(g.ny) * z);
        const Vec3 u = displacement_at(i, world_of_voxel(geometry, x, y, z));
        out.vectors[3 * i] = float(u.x);
        out.vectors[3 * i + 1] = float(u.y);
        out.vectors[3 * i + 2] = float(u.z);
      }
  });
  return out;
}

}  // namespace regpipe_common
