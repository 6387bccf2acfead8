// The cost component shared by this plugin's dense measures (cuda.lcc, cuda.ls, cuda.mattes):
// RP_EXT_DENSE_COST for deformable optimizers (host memory: the images uploaded and the
// gradient downloaded; device memory of its device: no copies), and the affine evaluate of k
// transforms (the moving image resampled onto the reference grid as cpu.lcc and cpu.mattes do,
// warp_kernel.hpp, then the measure on the device with the resampled weights). The measure
// itself is a DeviceMetric (dense_problem.hpp).
#pragma once

#include "dense_problem.hpp"
#include "device_checks.hpp"
#include "params.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/voxel_map.hpp>
#include <regpipe_common_cuda/device_buffer.hpp>
#include <regpipe_common_cuda/device_session.hpp>
#include <regpipe_common_cuda/pinned_buffer.hpp>

#include <memory>
#include <optional>
#include <string>

namespace regpipe::cost_dense_cuda {

using regpipe_common_cuda::DeviceBuffer;

class CudaDenseCost {
 public:
  // `schema` holds device and threads_per_block; `id` is the component's, `cpu_twin` the CPU
  // component to use without a device.
  CudaDenseCost(const rp_host* host, const rp::Params& params, ParamList schema, std::unique_ptr<DeviceMetric> metric,
                const char* id, const char* cpu_twin);
  ~CudaDenseCost();
  CudaDenseCost(const CudaDenseCost&) = delete;
  CudaDenseCost& operator=(const CudaDenseCost&) = delete;

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
    bool weighted = false;
    double total_weight = 0.0;  // reference: the sum of its weights, in cpu.lcc's order
  };
  DeviceImage upload(const rp_image& image, const rp_image* weight, const char* role, DeviceBuffer<float>& values,
                     DeviceBuffer<float>& weights);
  // The grid part of a problem: dimensions, spacing and E^-T (throws for a bad grid).
  DenseProblem problem_on(const regpipe_common::Grid& grid, const double voxel_to_world[16]) const;
  // Points `p` at the request's images (checked; uploaded from host memory).
  void bind_request_images(const rp_dense_cost_request& request, std::size_t n, DenseProblem& p);

  const rp_host* host_;
  std::unique_ptr<DeviceMetric> metric_;
  const char* id_;
  int threads_per_block_;
  regpipe_common_cuda::DeviceInfo device_;
  cudaStream_t stream_ = nullptr;

  std::optional<DeviceImage> ref_, mov_;
  DeviceBuffer<float> ref_values_, ref_weights_, mov_values_, mov_weights_;
  // Dense requests from host memory: the images and the gradient on the device.
  DeviceBuffer<float> fixed_, moving_, mask_, gradient_;
  NonFiniteCheck device_inputs_check_;  // device-memory requests' images, read after the evaluation
  // The affine path: the warped moving image and its weights.
  DeviceBuffer<float> warped_, warped_weight_;
  DeviceBuffer<double> warp_partials_;
  regpipe_common_cuda::PinnedBuffer<double> results_;  // costs, then inside weights
};

}  // namespace regpipe::cost_dense_cuda
