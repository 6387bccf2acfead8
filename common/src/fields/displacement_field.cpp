#include <regpipe_common/fields/displacement_field.hpp>

#include <regpipe_common/affine_checks.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace regpipe_common {
void check_field_geometry(const FieldGeometry& geometry) {
  const Grid& g = geometry.dims;
  if (g.nx < 1 || g.ny < 1 || g.nz < 1)
    throw rp::Error(RP_INVALID_ARGUMENT, "displacement field dimensions " + std::to_string(g.nx) + "x" +
                                             std::to_string(g.ny) + "x" + std::to_string(g.nz) +
                                             " must each be at least 1");
  check_affine(geometry.voxel_to_world, "displacement field voxel_to_world");
}

DisplacementField zero_field(const FieldGeometry& geometry) {
  check_field_geometry(geometry);
  return {geometry, std::vector<float>(3 * voxel_count(geometry.dims), 0.f)};
}

DisplacementFieldView view_of(const FieldGeometry& geometry, const float* vectors) {
  check_field_geometry(geometry);
  DisplacementFieldView view{geometry, {}, vectors};
  invert_affine(geometry.voxel_to_world, view.world_to_voxel);  // check_affine proved it invertible
  return view;
}

DisplacementFieldView view_of(const DisplacementField& field) {
  if (field.vectors.size() != 3 * voxel_count(field.geometry.dims))
    throw rp::Error(RP_INVALID_ARGUMENT, "displacement field holds " + std::to_string(field.vectors.size()) +
                                             " floats; its grid needs 3 per voxel, " +
                                             std::to_string(3 * voxel_count(field.geometry.dims)));
  return view_of(field.geometry, field.vectors.data());
}

double max_displacement_mm(const DisplacementField& field) {
  double largest = 0.0;
  for (std::size_t i = 0; i + 2 < field.vectors.size(); i += 3) {
    const double x = field.vectors[i], y = field.vectors[i + 1], z = field.vectors[i + 2];
    largest = std::max(largest, std::sqrt(x * x + y * y + z * z));
  }
  return largest;
}

}  // namespace regpipe_common
