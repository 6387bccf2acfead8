// What every dense cost of this plugin evaluates on the device: two images on one grid (the
// fixed one and the moving one resampled onto it), an optional weight, and where the world
// gradient goes. Host code (C++20) and kernels (C++17 under nvcc) meet here: plain structs and
// device pointers of the instance's device only.
#pragma once

#include <regpipe_common_cuda/device_session.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

struct DenseProblem {
  int nx = 1, ny = 1, nz = 1;
  double spacing_mm[3] = {1, 1, 1};                  // the grid's voxel spacing (central differences)
  double to_world[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};  // E^-T, row-major (world_gradient.hpp)
  const float* fixed = nullptr;
  const float* moving = nullptr;
  const float* weight = nullptr;  // null: weight 1 everywhere
  bool weight_is_mask = false;    // the weight is a mask: a voxel weighs 1 where it is > 0, else 0
  float* gradient_out = nullptr;  // null: the cost alone; else 3 floats per voxel, LPS world
  int threads_per_block = 256;
  // Device images of a metric that checks them (DeviceMetric::checks_finite): the lowest index
  // of a non-finite value of `fixed` and of `moving` goes here (atomicMin; reset by the caller).
  unsigned long long* first_non_finite = nullptr;
};

// One dense measure on the device (cuda.lcc's CC, cuda.ls's mean squares, cuda.mattes' MI),
// owning the buffers it reuses across evaluations.
class DeviceMetric {
 public:
  virtual ~DeviceMetric() = default;
  // Bytes of device memory one evaluation of `voxels` needs beyond the images (checked before
  // allocating).
  virtual std::size_t workspace_bytes(std::size_t voxels, bool weighted) const = 0;
  // Enqueues the evaluation on `stream`: the cost (double) into *cost_out (a device address;
  // page-locked host memory through its device view works) and, if asked, the gradient.
  virtual void run(const DenseProblem& problem, const regpipe_common_cuda::DeviceInfo& device, cudaStream_t stream,
                   double* cost_out) = 0;
  // Whether run notes non-finite voxels of both images in problem.first_non_finite (a pass that
  // reads them anyway), so the caller needs no check pass of its own.
  virtual bool checks_finite() const { return false; }
};

}  // namespace regpipe::cost_dense_cuda
