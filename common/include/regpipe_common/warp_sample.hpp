// The moving image seen from one reference voxel under an affine voxel map, as the local
// correlation costs resample it (cpu.lcc on the host, cuda.lcc in a kernel: __host__
// __device__ under nvcc, so both sample the same float positions and trilinear values; the
// CUDA file compiles it with --fmad=false, and the two agree bit for bit).
#pragma once

#include <regpipe_common/voxel_map.hpp>

namespace regpipe_common {

struct WarpedVoxel {
  float value;   // the moving image, trilinear; 0 where the voxel does not count
  float weight;  // reference weight times the moving weight there; 0 where it does not count
  bool inside;   // the reference weight is > 0 and the point maps inside the moving image
  // The overlap weight, double(w_ref) * double(w_mov) as every cost's overlap_out sums it
  // (cost_cpu's traversal); 0 where the voxel does not count.
  double overlap;
};

// Reference voxel (x, y, z) of weight ref_weight through `map` (make_voxel_map) into the moving
// image; mov_weights may be null (weight 1). A voxel counts only where its reference weight is
// positive and it maps inside() the moving image (ANTs' CC likewise sums only voxels inside
// both images).
RP_HD WarpedVoxel warp_voxel(const VoxelMap& map, int x, int y, int z, float ref_weight, const float* mov_values,
                             const float* mov_weights, const Grid& mov_grid) {
  const double* m = map.m;
  const float px = float(m[0] * x + m[1] * y + m[2] * z + m[3]);
  const float py = float(m[4] * x + m[5] * y + m[6] * z + m[7]);
  const float pz = float(m[8] * x + m[9] * y + m[10] * z + m[11]);
  WarpedVoxel out{0.f, 0.f, false, 0.0};
  if (!(ref_weight > 0.f) || !inside(mov_grid, px, py, pz)) return out;
  const float w_mov = mov_weights == nullptr ? 1.f : trilinear(mov_weights, mov_grid, px, py, pz);
  out.weight = ref_weight * w_mov;
  out.overlap = double(ref_weight) * double(w_mov);
  out.value = trilinear(mov_values, mov_grid, px, py, pz);
  out.inside = true;
  return out;
}

}  // namespace regpipe_common
