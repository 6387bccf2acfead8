// abi.h 1.5's dense structs filled from regpipe_common's grids and fields: the one place the
// host, the plugins, the tests and the benchmarks build an rp_field or an
// rp_dense_cost_request, so a member added to either is set once.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>

#include <regpipe/abi.h>

#include <algorithm>
#include <cstdint>

namespace regpipe_common {

// A host-memory rp_field (size set) over `field`'s vectors, on its geometry; valid while the
// vectors are (an optimizer fills them through it).
inline rp_field field_view(DisplacementField& field) {
  rp_field f{};
  f.size = sizeof(f);
  f.dims[0] = uint32_t(field.geometry.dims.nx);
  f.dims[1] = uint32_t(field.geometry.dims.ny);
  f.dims[2] = uint32_t(field.geometry.dims.nz);
  std::copy(field.geometry.voxel_to_world, field.geometry.voxel_to_world + 16, f.voxel_to_world);
  f.memory = RP_MEMORY_HOST;
  f.vectors = field.vectors.data();
  return f;
}

// The buffers of one dense evaluation (all in the request's memory but cost_out, which is
// host memory).
struct DenseCostBuffers {
  const float* fixed = nullptr;
  const float* moving = nullptr;
  const float* fixed_mask = nullptr;  // nullable
  double* cost_out = nullptr;
  float* gradient_out = nullptr;  // nullable: the cost alone
};

// An rp_dense_cost_request (size set) for images on `grid` in `memory` (RP_MEMORY_HOST, or
// RP_MEMORY_DEVICE on CUDA device `device`).
inline rp_dense_cost_request dense_cost_request(const FieldGeometry& grid, const DenseCostBuffers& buffers,
                                                int32_t memory = RP_MEMORY_HOST, int32_t device = 0) {
  rp_dense_cost_request r{};
  r.size = sizeof(r);
  r.dims[0] = uint32_t(grid.dims.nx);
  r.dims[1] = uint32_t(grid.dims.ny);
  r.dims[2] = uint32_t(grid.dims.nz);
  std::copy(grid.voxel_to_world, grid.voxel_to_world + 16, r.voxel_to_world);
  r.memory = memory;
  r.device = memory == RP_MEMORY_DEVICE ? device : 0;
  r.fixed = buffers.fixed;
  r.moving = buffers.moving;
  r.fixed_mask = buffers.fixed_mask;
  r.cost_out = buffers.cost_out;
  r.gradient_out = buffers.gradient_out;
  return r;
}

}  // namespace regpipe_common
