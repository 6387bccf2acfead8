// Per-voxel device helpers of the dense costs: the weight rule, and d cost / d u written in
// LPS world from d cost / d m (the moving image's central difference taken on the fly, as
// regpipe_common/dense_metrics/image_gradient.hpp computes it, then E^-T as world_gradient.hpp).
#pragma once

#include "dense_problem.hpp"

#include <regpipe_common/central_difference.hpp>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

struct Dims {
  int nx, ny, nz;
  std::size_t n;
};

inline Dims dims_of(const DenseProblem& p) {
  return {p.nx, p.ny, p.nz, std::size_t(p.nx) * std::size_t(p.ny) * std::size_t(p.nz)};
}

// What the per-voxel kernels read of one problem (passed by value to kernels).
struct VoxelArgs {
  Dims d;
  double inverse_spacing_mm[3];  // 1 / spacing: the gradient multiplies (a division costs the FP64 pipe ~10x)
  double to_world[9];
  float inverse_spacing_mm_f[3];  // the same in float, for write_world_gradient<float>
  float to_world_f[9];
  const float* fixed;
  const float* moving;
  const float* weight;
  bool weight_is_mask;
  float* gradient_out;
};

inline VoxelArgs voxel_args(const DenseProblem& p) {
  VoxelArgs a{dims_of(p), {}, {}, {}, {}, p.fixed, p.moving, p.weight, p.weight_is_mask, p.gradient_out};
  for (int k = 0; k < 3; ++k) {
    a.inverse_spacing_mm[k] = 1.0 / p.spacing_mm[k];
    a.inverse_spacing_mm_f[k] = float(a.inverse_spacing_mm[k]);
  }
  for (int k = 0; k < 9; ++k) {
    a.to_world[k] = p.to_world[k];
    a.to_world_f[k] = float(p.to_world[k]);
  }
  return a;
}

// The weight of a voxel whose weight image holds v.
__device__ __forceinline__ double weight_value(float v, bool is_mask) {
  return is_mask ? (v > 0.f ? 1.0 : 0.0) : double(v);
}

__device__ __forceinline__ double weight_of(const float* w, bool is_mask, std::size_t i) {
  return w == nullptr ? 1.0 : weight_value(w[i], is_mask);
}

// The moving image's two voxels of its central difference along each axis at a voxel, read
// apart from the arithmetic so that a kernel can issue them ahead (lcc_march.cu).
struct CentralDifference {
  float hi[3], lo[3];
  int span[3];  // hi - lo in voxels: 2 inside, 1 on a face, 0 along an axis of one voxel
};

__device__ __forceinline__ CentralDifference central_difference(const VoxelArgs& a, const long at[3], std::size_t i) {
  const std::size_t nx = std::size_t(a.d.nx), plane = nx * std::size_t(a.d.ny);
  const long size[3] = {a.d.nx, a.d.ny, a.d.nz};
  const std::size_t stride[3] = {1, nx, plane};
  CentralDifference c;
  for (int axis = 0; axis < 3; ++axis) {
    const regpipe_common::DifferenceNeighbours nb = regpipe_common::difference_neighbours(at[axis], size[axis]);
    c.hi[axis] = a.moving[i + (nb.hi - at[axis]) * stride[axis]];
    c.lo[axis] = a.moving[i - (at[axis] - nb.lo) * stride[axis]];
    c.span[axis] = int(nb.hi - nb.lo);
  }
  return c;
}

// d cost / d u at voxel i along the grid axes, from d cost / d m(i) and the moving image's central
// difference there (as image_gradient.hpp computes it, in float), into LPS world (float). Real:
// the arithmetic after the difference. double is the CPU references' (E^-T in double: their bits,
// to an ulp of the double before the float); float keeps every step in float (a few ulps of the
// float; cuda.lcc's, whose FP64 pipe's conversions it spares).
template <class Real = double>
__device__ __forceinline__ void write_world_gradient(const VoxelArgs& a, const CentralDifference& c, std::size_t i,
                                                     double d_cost_d_m) {
  constexpr bool kFloat = sizeof(Real) == sizeof(float);
  const Real d = Real(d_cost_d_m);
  Real g[3];
  for (int axis = 0; axis < 3; ++axis) {
    // rise / ((hi - lo) spacing), hi - lo being 2 inside and 1 on the faces.
    const bool inside = c.span[axis] == 2;
    float grad_m;
    if constexpr (kFloat)
      grad_m = (c.hi[axis] - c.lo[axis]) * (a.inverse_spacing_mm_f[axis] * (inside ? 0.5f : 1.0f));
    else  // to an ulp of the double
      grad_m = float((double(c.hi[axis]) - double(c.lo[axis])) * (a.inverse_spacing_mm[axis] * (inside ? 0.5 : 1.0)));
    g[axis] = d * Real(c.span[axis] > 0 ? grad_m : 0.0f);
  }
  const Real* to_world;
  if constexpr (kFloat)
    to_world = a.to_world_f;
  else
    to_world = a.to_world;
  for (int r = 0; r < 3; ++r)
    a.gradient_out[3 * i + r] = float(to_world[3 * r + 0] * g[0] + to_world[3 * r + 1] * g[1] + to_world[3 * r + 2] * g[2]);
}

// The same at voxel i = (at[0], at[1], at[2]).
template <class Real = double>
__device__ __forceinline__ void write_world_gradient(const VoxelArgs& a, const long at[3], std::size_t i,
                                                     double d_cost_d_m) {
  write_world_gradient<Real>(a, central_difference(a, at, i), i, d_cost_d_m);
}

// The grid coordinates of voxel i (64-bit divisions: kernels that know them pass them instead).
__device__ __forceinline__ void voxel_at(const Dims& d, std::size_t i, long at[3]) {
  const std::size_t nx = std::size_t(d.nx), plane = nx * std::size_t(d.ny);
  at[0] = long(i % nx);
  at[1] = long(i % plane / nx);
  at[2] = long(i / plane);
}

// The same at voxel i of a grid-stride loop.
template <class Real = double>
__device__ __forceinline__ void write_world_gradient(const VoxelArgs& a, std::size_t i, double d_cost_d_m) {
  long at[3];
  voxel_at(a.d, i, at);
  write_world_gradient<Real>(a, at, i, d_cost_d_m);
}

__device__ __forceinline__ void write_zero_gradient(const VoxelArgs& a, std::size_t i) {
  a.gradient_out[3 * i] = a.gradient_out[3 * i + 1] = a.gradient_out[3 * i + 2] = 0.f;
}

}  // namespace regpipe::cost_dense_cuda
