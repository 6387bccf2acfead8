#include <regpipe_common/fields/warp_image.hpp>

#include <regpipe_common/affine_checks.hpp>

#include <regpipe/plugin.hpp>

#include <string>

namespace regpipe_common {

std::vector<float> warp_image(const rp_image& moving, const DisplacementFieldView& field, const FieldGeometry& output,
                              float background, Execution execution) {
  if (moving.dims[0] < 1 || moving.dims[1] < 1 || moving.dims[2] < 1 || !moving.data)
    throw rp::Error(RP_INVALID_ARGUMENT, "the image warped through a field has no voxels");
  check_affine(moving.voxel_to_world, "voxel_to_world of the image warped through a field");
  check_field_geometry(output);
  double world_to_moving[16];
  invert_affine(moving.voxel_to_world, world_to_moving);
  const Grid mg{int(moving.dims[0]), int(moving.dims[1]), int(moving.dims[2])};
  const Grid& g = output.dims;
  std::vector<float> out(voxel_count(g));
  for_each_plane(g.nz, execution, [&](int z) {
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const Vec3 p = world_of_voxel(output, x, y, z);
        const Vec3 v = apply_affine(world_to_moving, p + sample_displacement(field, p));
        const float vx = float(snap_to_domain(v.x, mg.nx)), vy = float(snap_to_domain(v.y, mg.ny)),
                    vz = float(snap_to_domain(v.z, mg.nz));
        out[std::size_t(x) + std::size_t(g.nx) * (std::size_t(y) + std::size_t(g.ny) * z)] =
            inside(mg, vx, vy, vz) ? trilinear(moving.data, mg, vx, vy, vz) : background;
      }
  });
  return out;
}

}  // namespace regpipe_common
