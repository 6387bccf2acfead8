// abi.h's structs filled from regpipe_common's grids and fields: the one place the host, the
// plugins, the tests and the benchmarks build an rp_image of a grid, an rp_field or an
// rp_dense_cost_request, so a member added to one is set once.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/prepared_image.hpp>

#include <regpipe/abi.h>

#include <algorithm>
#include <cstdint>

namespace regpipe_common {

// `grid`'s dimensions and voxel_to_world into an ABI struct that has both (rp_field,
// rp_dense_cost_request), with its size.
template <class AbiStruct>
AbiStruct on_grid(const FieldGeometry& grid) {
  AbiStruct s{};
  s.size = sizeof(s);
  s.dims[0] = uint32_t(grid.dims.nx);
  s.dims[1] = uint32_t(grid.dims.ny);
  s.dims[2] = uint32_t(grid.dims.nz);
  std::copy(grid.voxel_to_world, grid.voxel_to_world + 16, s.voxel_to_world);
  return s;
}

// An rp_image of `data` (voxel_count(grid.dims) floats) on `grid`; valid while the data are.
inline rp_image image_view(const FieldGeometry& grid, const float* data) {
  const uint32_t dims[3] = {uint32_t(grid.dims.nx), uint32_t(grid.dims.ny), uint32_t(grid.dims.nz)};
  return image_view(dims, grid.voxel_to_world, data);
}

// A host-memory rp_field (size set) over `field`'s vectors, on its geometry; valid while the
// vectors are (an optimizer fills them through it).
inline rp_field field_view(DisplacementField& field) {
  rp_field f = on_grid<rp_field>(field.geometry);
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
  rp_dense_cost_request r = on_grid<rp_dense_cost_request>(grid);
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
