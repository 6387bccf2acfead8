// Mapping of reference voxels to moving voxels and trilinear sampling, shared by the CPU
// reference costs and the CUDA kernels (__host__ __device__ when compiled by nvcc), so the
// GPU schemes sample exactly as the reference does.
#pragma once

#include <regpipe/abi.h>

#include <cstddef>

#if defined(__CUDACC__)
#define RP_HD __host__ __device__ __forceinline__
#else
#define RP_HD inline
#endif

namespace regpipe_common {

// Affine map of a reference voxel index to a moving voxel index (row-major 3x4).
struct VoxelMap {
  double m[12];
};

// Reference voxel -> moving voxel for one transform: inv(mov_v2w) * T * ref_v2w, where T maps
// reference world to moving world (abi.h). Returns false when mov_v2w is singular.
bool make_voxel_map(const double ref_voxel_to_world[16], const double ref_world_to_moving_world[16],
                    const double mov_voxel_to_world[16], VoxelMap* out);

// Inverts a row-major 4x4 affine (last row 0 0 0 1). Returns false when singular.
bool invert_affine(const double a[16], double out[16]);

struct Grid {
  int nx, ny, nz;
};

inline std::size_t voxel_count(const Grid& g) { return std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz); }

// True when the point lies inside the sampling domain [0, n-1] on every axis (FLIRT's overlap
// rule: a sample needs all eight trilinear neighbours, or the one neighbour of a flat axis).
RP_HD bool inside(const Grid& g, float x, float y, float z) {
  return x >= 0.f && y >= 0.f && z >= 0.f && x <= float(g.nx - 1) && y <= float(g.ny - 1) &&
         z <= float(g.nz - 1);
}

// Trilinear interpolation at a point already known to be inside(). Clamps the upper
// neighbour so points exactly on the last plane (and flat axes) read valid memory.
RP_HD float trilinear(const float* data, const Grid& g, float x, float y, float z) {
  int x0 = int(x), y0 = int(y), z0 = int(z);
  float fx = x - float(x0), fy = y - float(y0), fz = z - float(z0);
  int x1 = x0 + 1 < g.nx ? x0 + 1 : x0;
  int y1 = y0 + 1 < g.ny ? y0 + 1 : y0;
  int z1 = z0 + 1 < g.nz ? z0 + 1 : z0;
  const long sx = 1, sy = g.nx, sz = long(g.nx) * g.ny;
  auto at = [&](int i, int j, int k) { return data[i * sx + j * sy + k * sz]; };
  float c00 = at(x0, y0, z0) + fx * (at(x1, y0, z0) - at(x0, y0, z0));
  float c10 = at(x0, y1, z0) + fx * (at(x1, y1, z0) - at(x0, y1, z0));
  float c01 = at(x0, y0, z1) + fx * (at(x1, y0, z1) - at(x0, y0, z1));
  float c11 = at(x0, y1, z1) + fx * (at(x1, y1, z1) - at(x0, y1, z1));
  float c0 = c00 + fy * (c10 - c00);
  float c1 = c01 + fy * (c11 - c01);
  return c0 + fz * (c1 - c0);
}

// Nearest-neighbour sample at a point already known to be inside().
RP_HD float nearest(const float* data, const Grid& g, float x, float y, float z) {
  int i = int(x + 0.5f), j = int(y + 0.5f), k = int(z + 0.5f);
  i = i < g.nx ? i : g.nx - 1;
  j = j < g.ny ? j : g.ny - 1;
  k = k < g.nz ? k : g.nz - 1;
  return data[i + long(g.nx) * (j + long(g.ny) * k)];
}

// Histogram bin of a value given the image's intensity range: bins equal-width over
// [lo, hi], hi falling in the last bin. The position is clamped in float before the
// conversion: converting an out-of-range float to int is undefined, and x86 and CUDA
// disagree on it (values far outside the range, e.g. of zero-weight voxels).
RP_HD int bin_of(float v, float lo, float inv_width, int bins) {
  float position = (v - lo) * inv_width;
  position = position < 0.f ? 0.f : (position > float(bins - 1) ? float(bins - 1) : position);
  return int(position);
}

}  // namespace regpipe_common
