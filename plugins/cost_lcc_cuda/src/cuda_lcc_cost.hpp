// cuda.lcc: ANTs' neighbourhood cross-correlation on an NVIDIA GPU, the measure of cpu.lcc
// (regpipe_common/dense_metrics/local_cc.hpp, box window): as RP_EXT_DENSE_COST for deformable
// optimizers (host or device memory), and under k affine transforms (the moving image
// resampled onto the reference grid exactly as cpu.lcc does, then the CC on the device).
#pragma once

#include "lcc_kernels.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/prepared_image.hpp>
#include <regpipe_common_cuda/device_session.hpp>
#include <regpipe_common_cuda/pinned_buffer.hpp>

#include <optional>

namespace regpipe::cost_lcc_cuda {

class CudaLccCost {
 public:
  CudaLccCost(const rp_host* host, const rp::Params& params);
  ~CudaLccCost();
  CudaLccCost(const CudaLccCost&) = delete;
  CudaLccCost& operator=(const CudaLccCost&) = delete;

  void set_reference(const rp_image& image, const rp_image* weight);
  void set_moving(const rp_image& image, const rp_image* weight);
  void evaluate(const rp_cost_request& request);
  void evaluate_dense(const rp_dense_cost_request& request);
  void describe_device(rp_device_info& out) const { regpipe_common_cuda::describe_device(device_, out); }

 private:
  // An image on the device with its grid.
  struct DeviceImage {
    regpipe_common::Grid grid{1, 1, 1};
    double voxel_to_world[16] = {};
    double spacing_mm[3] = {1, 1, 1};
    bool weighted = false;
    double total_weight = 0.0;  // reference: the sum of its weights, in cpu.lcc's order
  };
  DeviceImage upload(const rp_image& image, const rp_image* weight, const char* role, DeviceBuffer<float>& values,
                     DeviceBuffer<float>& weights);
  LccProblem problem_on(const regpipe_common::Grid& grid, const double voxel_to_world[16]) const;

  const rp_host* host_;
  regpipe_common_cuda::DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  int radius_, threads_per_block_;
  bool exact_;
  WindowScheme scheme_;

  std::optional<DeviceImage> ref_, mov_;
  DeviceBuffer<float> ref_values_, ref_weights_, mov_values_, mov_weights_;
  // Dense requests from host memory: the images and the gradient on the device.
  DeviceBuffer<float> fixed_, moving_, mask_, gradient_;
  // The affine path: the warped moving image and its weights.
  DeviceBuffer<float> warped_, warped_weight_;
  DeviceBuffer<double> warp_partials_;
  LccWorkspace workspace_;
  regpipe_common_cuda::PinnedBuffer<double> results_;  // costs, then inside weights
};

}  // namespace regpipe::cost_lcc_cuda
