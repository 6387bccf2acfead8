// The affine path of the dense costs: the moving image resampled onto the reference grid
// through an affine voxel map (regpipe_common/warp_sample.hpp, the function cpu.lcc and
// cpu.mattes call), with weights, before the measure runs on the pair.
#pragma once

#include <regpipe_common/voxel_map.hpp>
#include <regpipe_common_cuda/device_buffer.hpp>

#include <cuda_runtime.h>

namespace regpipe::cost_dense_cuda {

struct WarpProblem {
  regpipe_common::VoxelMap map;
  regpipe_common::Grid ref_grid{1, 1, 1}, mov_grid{1, 1, 1};
  const float* ref_weight = nullptr;  // null: 1
  const float* mov_values = nullptr;
  const float* mov_weight = nullptr;  // null: 1
  float* warped_out = nullptr;
  float* weight_out = nullptr;
  int threads_per_block = 256;
};

// Enqueues the warp; *inside_weight_out (device) gets the overlap weight: w_ref * w_mov summed
// over the reference voxels that map inside the moving image (WarpedVoxel::overlap).
void run_warp(const WarpProblem& problem, regpipe_common_cuda::DeviceBuffer<double>& partials, cudaStream_t stream,
              double* inside_weight_out);

}  // namespace regpipe::cost_dense_cuda
