// FLIRT's fuzzy image edge (Jenkinson & Smith 2001; Li & Kumar 2014 section V.C): a
// sample's weight ramps linearly from 0 on the moving image's sampling-domain edge to 1 at
// border_mm inside it (shared by the CPU and CUDA costs), the ramps of the three axes multiplied. Voxels then enter and leave the
// overlap with weight 0, so the cost is continuous in the transform instead of jumping.
#pragma once

#include <regpipe_common/voxel_map.hpp>


namespace regpipe_common {

class BorderWeight {
 public:
  BorderWeight() = default;  // no ramp
  // Axes of one voxel (flat axes) have no inside to ramp into and are left unweighted.
  BorderWeight(const regpipe_common::Grid& grid, const double spacing_mm[3], double border_mm) {
    const int n[3] = {grid.nx, grid.ny, grid.nz};
    for (int a = 0; a < 3; ++a) {
      last_[a] = double(n[a] - 1);
      ramp_per_voxel_[a] = border_mm > 0.0 && n[a] > 1 ? spacing_mm[a] / border_mm : 0.0;
    }
  }

  // False when no axis ramps: the weight is then 1 everywhere.
  RP_HD bool ramps() const {
    return ramp_per_voxel_[0] != 0.0 || ramp_per_voxel_[1] != 0.0 || ramp_per_voxel_[2] != 0.0;
  }

  // Weight in [0, 1] at moving voxel coordinates inside the sampling domain [0, n-1].
  RP_HD double operator()(float x, float y, float z) const {
    const double p[3] = {x, y, z};
    double w = 1.0;
    for (int a = 0; a < 3; ++a) {
      if (ramp_per_voxel_[a] == 0.0) continue;
      const double to_edge = p[a] < last_[a] - p[a] ? p[a] : last_[a] - p[a];  // voxels
      const double ramp = to_edge * ramp_per_voxel_[a];
      w *= ramp < 1.0 ? ramp : 1.0;
    }
    return w;
  }

 private:
  double last_[3] = {0.0, 0.0, 0.0};            // n - 1: the domain's upper edge per axis, in voxels
  double ramp_per_voxel_[3] = {0.0, 0.0, 0.0};  // spacing / border: ramp gained per voxel inwards; 0 = no ramp
};

}  // namespace regpipe_common
