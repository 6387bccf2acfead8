#include <regpipe/host/image.hpp>

namespace regpipe {

Eigen::Vector3d Image::spacing() const {
  return voxel_to_world.topLeftCorner<3, 3>().colwise().norm();
}

rp_image Image::view() const {
  rp_image v{};
  v.size = sizeof(rp_image);
  for (int i = 0; i < 3; ++i) v.dims[i] = dims[i];
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) v.voxel_to_world[4 * r + c] = voxel_to_world(r, c);
  v.data = data.data();
  return v;
}

}  // namespace regpipe
