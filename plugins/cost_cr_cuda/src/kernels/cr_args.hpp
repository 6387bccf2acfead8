// The one POD every CR kernel takes by value: device pointers and the sampling rule. Shared
// by all schemes so that each scheme's file holds only its accumulation strategy.
#pragma once

#include <regpipe_common/border_weight.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <regpipe_common_cuda/call_signal.hpp>

#include <vector_types.h>

#include <cstdint>

namespace regpipe::cost_cr_cuda {

// Per bin: {sum w, sum w y, sum w y^2} (regpipe_common::kCorrelationRatioSumsPerBin).
constexpr int kSumsPerBin = 3;

struct CrArgs {
  // Reference: per-voxel bin and optional weight over the full grid (x fastest).
  regpipe_common::Grid ref_grid;
  const int32_t* ref_bins;
  const float* ref_weight;  // null: weight 1
  // Moving: values and optional weight.
  regpipe_common::Grid mov_grid;
  const float* mov;
  const float* mov_weight;  // null: weight 1
  float3 mov_last;          // float(n - 1) per axis: the sampling domain's upper bounds (inside())
  // fused with trilinear sampling: the moving values as trilinear quads
  // (regpipe_common_cuda::TrilinearQuads) when the call reads them, else null.
  const float4* mov_quads;
  float mov_shift;          // the moving mean: y = value - shift keeps sums well conditioned
  int nearest;              // 1: nearest-neighbour sampling, else trilinear
  regpipe_common::BorderWeight border;
  int bins;
  // k reference-voxel -> moving-voxel maps (row-major 3x4, double).
  const double* maps;
  // Zero when a call starts and left zero by its finish step (cr_finish.cuh); doubles, or
  // int64 fixed point in the same 8-byte slots for fused (schemes.hpp).
  double* sums;     // k * bins * kSumsPerBin
  double* overlap;  // k: overlap weight (w_ref * w_mov of the voxels mapping inside)
  // The finish step's outputs, in page-locked host memory written by the device: the cost and
  // the (not yet normalised) overlap weight of each transform.
  double* costs_out;     // k
  double* overlaps_out;  // k
  // Raised once all k costs are written (one part a transform), for the host's wait.
  regpipe_common_cuda::CallSignalArgs signal;
};

}  // namespace regpipe::cost_cr_cuda
