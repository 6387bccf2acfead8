// regpipe_common::trilinear for device code with 32-bit offsets (the GPU costs index images of
// fewer than 2^31 voxels, checked when they are set): the same neighbour clamps and the same
// float operations in the same order, so the same value as the CPU costs; the shared helper's
// 64-bit offsets cost ~40 instructions a sample on the GPU. Device-only. trilinear_quads: the
// same value from an image's trilinear quads (trilinear_quads.hpp).
#pragma once

#include <regpipe_common/voxel_map.hpp>

namespace regpipe_common_cuda {

// Trilinear interpolation of eight neighbours v_xyz with fractions fx, fy, fz: the arithmetic
// of regpipe_common::trilinear, in its order, so every reader of the neighbours (gathers,
// cuda.cr's quads) gives the same bits.
__device__ __forceinline__ float trilinear_mix(float v000, float v100, float v010, float v110, float v001, float v101,
                                               float v011, float v111, float fx, float fy, float fz) {
  const float c00 = v000 + fx * (v100 - v000);
  const float c10 = v010 + fx * (v110 - v010);
  const float c01 = v001 + fx * (v101 - v001);
  const float c11 = v011 + fx * (v111 - v011);
  const float c0 = c00 + fy * (c10 - c00);
  const float c1 = c01 + fy * (c11 - c01);
  return c0 + fz * (c1 - c0);
}

// At a point already known to be inside(g, x, y, z); eight read-only-cache loads.
__device__ __forceinline__ float trilinear_32(const float* __restrict__ data, const regpipe_common::Grid& g, float x,
                                              float y, float z) {
  const int x0 = int(x), y0 = int(y), z0 = int(z);
  const float fx = x - float(x0), fy = y - float(y0), fz = z - float(z0);
  const int sy = g.nx, sz = g.nx * g.ny;
  const int dx = x0 + 1 < g.nx ? 1 : 0;
  const int dy = y0 + 1 < g.ny ? sy : 0;
  const int dz = z0 + 1 < g.nz ? sz : 0;
  const int i = x0 + sy * y0 + sz * z0;
  const float v000 = __ldg(data + i), v100 = __ldg(data + i + dx);
  const float v010 = __ldg(data + i + dy), v110 = __ldg(data + i + dy + dx);
  const float v001 = __ldg(data + i + dz), v101 = __ldg(data + i + dz + dx);
  const float v011 = __ldg(data + i + dz + dy), v111 = __ldg(data + i + dz + dy + dx);
  return trilinear_mix(v000, v100, v010, v110, v001, v101, v011, v111, fx, fy, fz);
}

// The same value from the quads of make_trilinear_quads (trilinear_quads.hpp): two 16-byte
// loads hold the eight neighbours (the x and y clamps are in the quads), so a warp reads
// contiguous memory with a quarter of the load instructions and none of their address
// arithmetic.
__device__ __forceinline__ float trilinear_quads(const float4* __restrict__ quads, const regpipe_common::Grid& g,
                                                 float x, float y, float z) {
  const int x0 = int(x), y0 = int(y), z0 = int(z);
  const float fx = x - float(x0), fy = y - float(y0), fz = z - float(z0);
  const int sz = g.nx * g.ny;
  const int i = x0 + g.nx * y0 + sz * z0;
  const int dz = z0 + 1 < g.nz ? sz : 0;
  const float4 lower = __ldg(quads + i), upper = __ldg(quads + i + dz);
  return trilinear_mix(lower.x, lower.y, lower.z, lower.w, upper.x, upper.y, upper.z, upper.w, fx, fy, fz);
}

}  // namespace regpipe_common_cuda
