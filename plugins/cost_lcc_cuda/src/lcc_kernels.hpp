// cuda.lcc's device side: ANTs' neighbourhood CC (regpipe_common/dense_metrics/local_cc.hpp,
// box window) over images already on the device, and the affine resampling before it. Host
// code (cuda_lcc_cost.cpp, C++20) and the kernels (lcc_kernels.cu, warp_kernel.cu, C++17 under
// nvcc) meet here: plain structs and device pointers only.
#pragma once

#include <regpipe_common/voxel_map.hpp>
#include <regpipe_common_cuda/device_buffer.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe::cost_lcc_cuda {

using regpipe_common_cuda::DeviceBuffer;

enum class WindowScheme {
  separable,  // ours: the six window sums by running sums along x, y, z (three passes)
  luo         // Luo et al. 2015: one thread per voxel summing its (2r+1)^3 window from textures
};

// One CC evaluation on the device; every pointer is device memory of the instance's device.
struct LccProblem {
  int nx = 1, ny = 1, nz = 1;
  double spacing_mm[3] = {1, 1, 1};  // the grid's voxel spacing (central differences)
  double to_world[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};  // E^-T, row-major (world_gradient.hpp)
  const float* fixed = nullptr;
  const float* moving = nullptr;
  const float* weight = nullptr;  // null: weight 1 everywhere
  bool weight_is_mask = false;    // the weight is a mask: a voxel weighs 1 where it is > 0, else 0
  float* gradient_out = nullptr;  // null: the cost alone; else 3 floats per voxel, LPS world
  int radius = 4;
  bool exact = false;  // the exact gradient (separable only); else ANTs' own-window one
  WindowScheme scheme = WindowScheme::separable;
  int threads_per_block = 256;
};

// Buffers reused across evaluations (grown on demand), and Luo's textures.
class LccWorkspace {
 public:
  LccWorkspace() = default;
  ~LccWorkspace();
  LccWorkspace(const LccWorkspace&) = delete;
  LccWorkspace& operator=(const LccWorkspace&) = delete;

  DeviceBuffer<double> sums_a, sums_b;  // 6 arrays of N doubles each
  DeviceBuffer<double> partials;        // per block partial sums
  DeviceBuffer<double> stats;           // global sums (kStat*)
  DeviceBuffer<unsigned long long> first_bad;
  // Luo: 3D arrays of the fixed, moving and weight images, and their texture objects.
  cudaArray_t arrays[3] = {nullptr, nullptr, nullptr};
  cudaTextureObject_t textures[3] = {0, 0, 0};
  int array_dims[3] = {0, 0, 0};
  void release_textures();
};

// Bytes of device memory one evaluation of N voxels needs beyond the images (for the checks
// before allocating).
std::size_t workspace_bytes(std::size_t voxels, WindowScheme scheme, bool weighted);

// Largest x-line the separable scheme's x pass takes in shared memory (bytes per block).
std::size_t x_pass_shared_bytes(int nx, bool products);

// Enqueues the whole evaluation on `stream`: writes the cost (double) to *cost_out (device
// address; page-locked host memory through its device view works) and, if asked, the world
// gradient. `overlap_inside` (nullable, device) is added nothing: used by the affine path only.
void run_local_cc(const LccProblem& problem, LccWorkspace& workspace, int sm_count, std::size_t shared_optin,
                  cudaStream_t stream, double* cost_out);

// The index of the first non-finite value of data[0, n) into *first_bad_host (n when all are
// finite); synchronises the stream.
std::size_t first_non_finite(const float* data, std::size_t n, LccWorkspace& workspace, cudaStream_t stream);

// The affine path: the moving image resampled onto the reference grid through `map`
// (warp_sample.hpp), with weights; *inside_weight_out (device) gets the sum of the reference
// weights that map inside the moving image.
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
void run_warp(const WarpProblem& problem, DeviceBuffer<double>& partials, cudaStream_t stream,
              double* inside_weight_out);

}  // namespace regpipe::cost_lcc_cuda
