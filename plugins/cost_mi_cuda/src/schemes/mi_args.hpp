// The one POD every joint-histogram kernel takes by value, and the sampling of one reference
// voxel exactly as cost_cpu does it (traversal.hpp: position in double rounded once to float,
// the shared inside()/trilinear()/nearest(), the moving bin through bin_of).
#pragma once

#include <regpipe_common/voxel_map.hpp>

#include <vector_types.h>

#include <cstdint>

namespace regpipe::cost_mi_cuda {

struct MiArgs {
  regpipe_common::Grid ref_grid;
  const uint16_t* ref_bins;  // per reference voxel (x fastest); bins <= 1024
  regpipe_common::Grid mov_grid;
  const float* mov;
  // privatised, trilinear: the moving image as trilinear quads (regpipe_common_cuda::
  // TrilinearQuads) for a call that reads them, else nullptr (the same values from mov).
  const float4* mov_quads;
  float mov_lo, mov_inv_width;  // the moving image's IntensityBinning
  int nearest;                  // 1: nearest-neighbour sampling, else trilinear
  int bins;                     // per image: the joint histogram is bins x bins, row = reference bin
  const double* maps;           // k reference-voxel -> moving-voxel maps (row-major 3x4)
  unsigned* joint;              // k * bins * bins counts, zeroed before the histogram kernel
  // partial_volume (privatised only): the k histograms in fixed point instead, 2^20 units a
  // sample (regpipe_common/partial_volume_weights.hpp), zeroed; joint is then unused. nullptr
  // without partial volume.
  unsigned long long* joint_pv;
};

#if defined(__CUDACC__)
// The reference bin of reference voxel `index`.
__device__ __forceinline__ int ref_bin(const MiArgs& a, uint32_t index) { return int(__ldg(a.ref_bins + index)); }

// The moving bin seen by reference voxel `index` under map m, or -1 when it maps outside the
// moving image.
__device__ __forceinline__ int moving_bin(const MiArgs& a, const double* __restrict__ m, uint32_t index) {
  const uint32_t plane = uint32_t(a.ref_grid.nx) * uint32_t(a.ref_grid.ny);
  const int z = int(index / plane);
  const uint32_t rest = index - uint32_t(z) * plane;
  const int y = int(rest / uint32_t(a.ref_grid.nx));
  const int x = int(rest - uint32_t(y) * uint32_t(a.ref_grid.nx));
  const float px = float(m[0] * x + m[1] * y + m[2] * z + m[3]);
  const float py = float(m[4] * x + m[5] * y + m[6] * z + m[7]);
  const float pz = float(m[8] * x + m[9] * y + m[10] * z + m[11]);
  if (!regpipe_common::inside(a.mov_grid, px, py, pz)) return -1;
  const float v = a.nearest ? regpipe_common::nearest(a.mov, a.mov_grid, px, py, pz)
                            : regpipe_common::trilinear(a.mov, a.mov_grid, px, py, pz);
  return regpipe_common::bin_of(v, a.mov_lo, a.mov_inv_width, a.bins);
}

// The joint bin (reference bin * bins + moving bin) of reference voxel `index` under map m,
// or -1 when it maps outside the moving image.
__device__ __forceinline__ int joint_bin(const MiArgs& a, const double* __restrict__ m, uint32_t index) {
  const int mov_bin = moving_bin(a, m, index);
  return mov_bin < 0 ? -1 : ref_bin(a, index) * a.bins + mov_bin;
}
#endif

}  // namespace regpipe::cost_mi_cuda
