// Where the moving image has data on the reference grid, from the transform and the moving
// grid (the registered intensities cannot tell a dark head from no image).
#include <regpipe/host/qa_picture.hpp>

#include "qa/for_each_slice.hpp"

#include <Eigen/LU>

namespace regpipe {

std::vector<uint8_t> moving_coverage(const Image& reference, const Image& moving,
                                     const Eigen::Matrix4d& ref_to_mov) {
  // Reference voxel -> moving voxel, one matrix.
  const Eigen::Matrix4d to_moving_voxel = moving.voxel_to_world.inverse() * ref_to_mov * reference.voxel_to_world;
  constexpr double kSlack = 1e-6;  // voxels: a grid mapped onto itself stays covered at its border
  const auto& d = reference.dims;
  std::vector<uint8_t> covered(reference.voxel_count());
  for_each_slice(d[2], [&](uint32_t z) {
    size_t i = size_t(z) * d[0] * d[1];
    for (uint32_t y = 0; y < d[1]; ++y)
      for (uint32_t x = 0; x < d[0]; ++x, ++i) {
        const Eigen::Vector4d m = to_moving_voxel * Eigen::Vector4d(x, y, z, 1.0);
        bool inside = true;
        for (int a = 0; a < 3; ++a) inside = inside && m[a] >= -kSlack && m[a] <= double(moving.dims[a]) - 1.0 + kSlack;
        covered[i] = inside;
      }
  });
  return covered;
}

}  // namespace regpipe
