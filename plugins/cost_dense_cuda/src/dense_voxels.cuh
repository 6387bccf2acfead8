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
  const float* fixed;
  const float* moving;
  const float* weight;
  bool weight_is_mask;
  float* gradient_out;
};

inline VoxelArgs voxel_args(const DenseProblem& p) {
  VoxelArgs a{dims_of(p), {1.0 / p.spacing_mm[0], 1.0 / p.spacing_mm[1], 1.0 / p.spacing_mm[2]}, {}, p.fixed,
              p.moving, p.weight, p.weight_is_mask, p.gradient_out};
  for (int k = 0; k < 9; ++k) a.to_world[k] = p.to_world[k];
  return a;
}

// The weight of a voxel whose weight image holds v.
__device__ __forceinline__ double weight_value(float v, bool is_mask) {
  return is_mask ? (v > 0.f ? 1.0 : 0.0) : double(v);
}

__device__ __forceinline__ double weight_of(const float* w, bool is_mask, std::size_t i) {
  return w == nullptr ? 1.0 : weight_value(w[i], is_mask);
}

// d cost / d u at voxel i = (at[0], at[1], at[2]) along the grid axes, from d cost / d m(i), into
// LPS world (float).
__device__ __forceinline__ void write_world_gradient(const VoxelArgs& a, const long at[3], std::size_t i,
                                                     double d_cost_d_m) {
  const std::size_t nx = std::size_t(a.d.nx), plane = nx * std::size_t(a.d.ny);
  const long size[3] = {a.d.nx, a.d.ny, a.d.nz};
  const std::size_t stride[3] = {1, nx, plane};
  double g[3];
  for (int axis = 0; axis < 3; ++axis) {
    // The moving image's central difference, as image_gradient.hpp computes it (in float).
    const regpipe_common::DifferenceNeighbours nb = regpipe_common::difference_neighbours(at[axis], size[axis]);
    const double rise = double(a.moving[i + (nb.hi - at[axis]) * stride[axis]]) -
                        double(a.moving[i - (at[axis] - nb.lo) * stride[axis]]);
    // rise / ((hi - lo) spacing), hi - lo being 2 inside and 1 on the faces (to an ulp of the double).
    const double per_mm = a.inverse_spacing_mm[axis] * (nb.hi - nb.lo == 2 ? 0.5 : 1.0);
    const float grad_m = nb.hi > nb.lo ? float(rise * per_mm) : 0.0f;
    g[axis] = d_cost_d_m * grad_m;
  }
  for (int r = 0; r < 3; ++r)
    a.gradient_out[3 * i + r] =
        float(a.to_world[3 * r + 0] * g[0] + a.to_world[3 * r + 1] * g[1] + a.to_world[3 * r + 2] * g[2]);
}

// The grid coordinates of voxel i (64-bit divisions: kernels that know them pass them instead).
__device__ __forceinline__ void voxel_at(const Dims& d, std::size_t i, long at[3]) {
  const std::size_t nx = std::size_t(d.nx), plane = nx * std::size_t(d.ny);
  at[0] = long(i % nx);
  at[1] = long(i % plane / nx);
  at[2] = long(i / plane);
}

// The same at voxel i of a grid-stride loop.
__device__ __forceinline__ void write_world_gradient(const VoxelArgs& a, std::size_t i, double d_cost_d_m) {
  long at[3];
  voxel_at(a.d, i, at);
  write_world_gradient(a, at, i, d_cost_d_m);
}

__device__ __forceinline__ void write_zero_gradient(const VoxelArgs& a, std::size_t i) {
  a.gradient_out[3 * i] = a.gradient_out[3 * i + 1] = a.gradient_out[3 * i + 2] = 0.f;
}

}  // namespace regpipe::cost_dense_cuda
