#include <regpipe_common/voxel_map.hpp>

#include <cmath>

namespace regpipe_common {

bool invert_affine(const double a[16], double out[16]) {
  const double a00 = a[0], a01 = a[1], a02 = a[2], a10 = a[4], a11 = a[5], a12 = a[6],
               a20 = a[8], a21 = a[9], a22 = a[10];
  const double c00 = a11 * a22 - a12 * a21, c01 = a02 * a21 - a01 * a22,
               c02 = a01 * a12 - a02 * a11;
  const double det = a00 * c00 + a10 * c01 + a20 * c02;
  if (!(std::fabs(det) > 1e-300) || !std::isfinite(det)) return false;
  const double inv[9] = {c00 / det,
                         c01 / det,
                         c02 / det,
                         (a12 * a20 - a10 * a22) / det,
                         (a00 * a22 - a02 * a20) / det,
                         (a02 * a10 - a00 * a12) / det,
                         (a10 * a21 - a11 * a20) / det,
                         (a01 * a20 - a00 * a21) / det,
                         (a00 * a11 - a01 * a10) / det};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) out[r * 4 + c] = inv[r * 3 + c];
    out[r * 4 + 3] = -(inv[r * 3] * a[3] + inv[r * 3 + 1] * a[7] + inv[r * 3 + 2] * a[11]);
  }
  out[12] = out[13] = out[14] = 0.0;
  out[15] = 1.0;
  return true;
}

namespace {
void multiply(const double a[16], const double b[16], double out[16]) {
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      double s = 0.0;
      for (int k = 0; k < 4; ++k) s += a[r * 4 + k] * b[k * 4 + c];
      out[r * 4 + c] = s;
    }
}
}  // namespace

bool make_voxel_map(const double ref_voxel_to_world[16], const double ref_world_to_moving_world[16],
                    const double mov_voxel_to_world[16], VoxelMap* out) {
  double mov_world_to_voxel[16], t[16], full[16];
  if (!invert_affine(mov_voxel_to_world, mov_world_to_voxel)) return false;
  multiply(ref_world_to_moving_world, ref_voxel_to_world, t);
  multiply(mov_world_to_voxel, t, full);
  for (int i = 0; i < 12; ++i) out->m[i] = full[i];
  return true;
}

}  // namespace regpipe_common
