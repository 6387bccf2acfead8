// cuda.lcc's device side: ANTs' neighbourhood CC (regpipe_common/dense_metrics/local_cc.hpp,
// box window) over images already on the device. Host code (lcc_metric.cpp, C++20) and the
// kernels (lcc_kernels.cu, C++17 under nvcc) meet here: plain structs and device pointers only.
#pragma once

#include "dense_problem.hpp"
#include "lcc_march.hpp"

#include <regpipe_common_cuda/device_buffer.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

using regpipe_common_cuda::DeviceBuffer;

enum class WindowScheme {
  separable,  // ours: one pass, a block per x-y tile marching along z (lcc_march.cu)
  luo         // Luo et al. 2015: one thread per voxel summing its (2r+1)^3 window from textures
};

// One CC evaluation on the device: the images and, beyond them, the window's settings.
struct LccProblem : DenseProblem {
  int radius = 4;
  bool exact = false;  // the exact gradient (separable only); else ANTs' own-window one
  WindowScheme scheme = WindowScheme::separable;
};

// Buffers reused across evaluations (grown on demand), and Luo's textures.
class LccWorkspace {
 public:
  LccWorkspace() = default;
  ~LccWorkspace();
  LccWorkspace(const LccWorkspace&) = delete;
  LccWorkspace& operator=(const LccWorkspace&) = delete;

  DeviceBuffer<double> sums_a, sums_b;  // luo: the 6 window sums in a; exact: the 4 terms in b, a for their y pass
  DeviceBuffer<double> partials;        // per block partial sums
  DeviceBuffer<double> stats;           // global sums (kStat*)
  // The separable scheme's launch, planned again only when the grid, radius, threads or
  // weighting change (the occupancy query costs host time on every level's small grids).
  MarchLaunch march;
  int march_key[6] = {0, 0, 0, 0, 0, 0};
  // Luo: 3D arrays of the fixed, moving and weight images, and their texture objects.
  cudaArray_t arrays[3] = {nullptr, nullptr, nullptr};
  cudaTextureObject_t textures[3] = {0, 0, 0};
  int array_dims[3] = {0, 0, 0};
  void release_textures();
};

// Bytes of device memory one evaluation of N voxels needs beyond the images (for the checks
// before allocating).
std::size_t lcc_workspace_bytes(std::size_t voxels, WindowScheme scheme, bool exact, bool weighted);

// Shared memory of the x pass of one array (the exact gradient's terms): a whole x-line.
std::size_t x_pass_shared_bytes(int nx);

// Enqueues the whole evaluation on `stream`: writes the cost (double) to *cost_out (device
// address; page-locked host memory through its device view works) and, if asked, the world
// gradient. `overlap_inside` (nullable, device) is added nothing: used by the affine path only.
void run_local_cc(const LccProblem& problem, LccWorkspace& workspace, int sm_count, std::size_t shared_optin,
                  cudaStream_t stream, double* cost_out);

}  // namespace regpipe::cost_dense_cuda
