// cuda.lcc's separable scheme: the window sums and the correlation in one pass over the images
// (lcc_march.cu). Host code and kernels meet here: plain types and device pointers only.
#pragma once

#include "dense_voxels.cuh"

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

// The launch of one pass, sized to the grid and the device.
struct MarchLaunch {
  dim3 grid;               // x-tiles, y-tiles, z-segments
  int threads = 0;         // a warp per kMarchRowsPerThread output rows of a tile
  int segment = 0;         // planes per z-segment
  bool weighted = false;   // for a weight image (else the window's weight is its voxel count)
  std::size_t shared = 0;  // bytes of shared memory per block
  std::size_t blocks() const { return std::size_t(grid.x) * grid.y * grid.z; }
};

// Chooses the tiles and segments for a grid, with or without a weight image: at most `threads`
// (and 256) per block, fewer where the grid has fewer rows or the shared memory would not fit
// `shared_optin`; segments enough to fill the device's `sm_count` multiprocessors once. Throws
// where even one warp's tile does not fit.
MarchLaunch plan_lcc_march(const Dims& d, int radius, bool weighted, int threads, int sm_count,
                           std::size_t shared_optin);

// Enqueues the pass (a.weight null unless plan.weighted): per voxel, the correlation of its window and ANTs' gradient into
// a.gradient_out (or the exact gradient's terms into `terms`, 4 arrays of n, if not null); per
// block, its share of the sum of w rho2 into partials[block] (plan.blocks() of them).
void launch_lcc_march(const MarchLaunch& plan, const VoxelArgs& a, const double* stats, double* terms,
                      double* partials, int radius, cudaStream_t stream);

}  // namespace regpipe::cost_dense_cuda
