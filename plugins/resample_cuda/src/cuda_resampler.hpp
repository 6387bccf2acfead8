// resample.cuda: one request = upload the input (unless the request's input_id says the
// previous upload is still it), smooth it on the device when a prefilter is asked for (the
// pyramid), sample the output grid, copy it back. Device buffers are kept between requests.
// RP_EXT_DEVICE_IMAGE (abi.h, 1.3): resample_to_device samples into a buffer of its own that
// the instance keeps, unread by later requests, until release_device_image or destruction;
// a released buffer is kept for a later output rather than freed (cudaFree waits for the whole
// device: with several registrations on one GPU, each registration's end would stall the others).
#pragma once

#include "texture_volume.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common_cuda/device_buffer.hpp>
#include <regpipe_common_cuda/device_session.hpp>

#include <cstddef>
#include <map>
#include <memory>
#include <vector>

namespace regpipe::resample_cuda {

class CudaResampler {
 public:
  CudaResampler(const rp_host* host, const rp::Params& params);
  ~CudaResampler();
  CudaResampler(const CudaResampler&) = delete;
  CudaResampler& operator=(const CudaResampler&) = delete;

  void resample(const rp_resample_request& request);
  int32_t device() const { return device_.index; }
  void describe_device(rp_device_info& out) const { regpipe_common_cuda::describe_device(device_, out); }
  void resample_to_device(const rp_resample_request& request, rp_device_image& out);
  void release_device_image(uint64_t handle) noexcept;
  rp_transfer_counts transfer_counts() const { return counts_; }

 private:
  // Checks the request and samples its output grid into `output` (queued on stream_).
  void sample(const rp_resample_request& request, regpipe_common_cuda::DeviceBuffer<float>& output,
              bool host_output);
  // Makes input_ hold the request's input: uploads it, or keeps the previous upload when
  // input_id promises the same unchanged image.
  void load_input(const rp_resample_request& request);
  // Smooths input_ per prefilter_sigma_mm into the work buffers (input_ is kept for the next
  // request on the same image); returns the buffer that holds the result.
  const float* prefilter(const rp_resample_request& request);
  void check_cancelled() const;
  // What the destructor frees (also a constructor that throws).
  void release() noexcept;
  // Host <-> device copies of float arrays on stream_ through the page-locked staging below
  // (plain pageable copies for small ones); both have finished host-side when they return
  // except copy_to_device's last device copies, which stream_ orders before later work.
  void copy_to_device(float* device, const float* host, std::size_t count);
  void copy_to_host(float* host, const float* device, std::size_t count);

  const rp_host* host_;
  bool texture_sampling_;
  int sinc_radius_;
  regpipe_common_cuda::DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  regpipe_common_cuda::DeviceBuffer<float> input_, work_a_, work_b_, output_;
  // What input_ holds: the caller's id and image (0 = nothing reusable).
  uint64_t loaded_id_ = 0;
  const float* loaded_data_ = nullptr;
  Extent loaded_extent_{0, 0, 0};
  double loaded_voxel_to_world_[16] = {};
  regpipe_common_cuda::DeviceBuffer<double> kernel_weights_, coefficients_;
  TextureVolume texture_;
  // Page-locked staging, allocated with the instance: cut into slabs whose host memcpy runs on
  // several threads while the DMA of the slabs before runs; an event per slab.
  float* staging_ = nullptr;
  std::vector<cudaEvent_t> slab_done_;
  // resample_to_device's outputs by handle (the first is 1).
  std::map<uint64_t, std::unique_ptr<regpipe_common_cuda::DeviceBuffer<float>>> device_images_;
  // Released buffers, for the next outputs (a registration's levels: the same sizes again).
  std::vector<std::unique_ptr<regpipe_common_cuda::DeviceBuffer<float>>> spare_;
  uint64_t last_handle_ = 0;
  rp_transfer_counts counts_{sizeof(rp_transfer_counts), 0, 0, 0, 0};
};

}  // namespace regpipe::resample_cuda
