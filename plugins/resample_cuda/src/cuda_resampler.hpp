// resample.cuda: one request = upload the input, smooth it on the device when a prefilter is
// asked for (the pyramid), sample the output grid, copy it back. Device buffers are kept
// between requests, so a pyramid's levels reuse them.
#pragma once

#include "texture_volume.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common_cuda/device_buffer.hpp>
#include <regpipe_common_cuda/device_session.hpp>

namespace regpipe::resample_cuda {

class CudaResampler {
 public:
  CudaResampler(const rp_host* host, const rp::Params& params);
  ~CudaResampler();
  CudaResampler(const CudaResampler&) = delete;
  CudaResampler& operator=(const CudaResampler&) = delete;

  void resample(const rp_resample_request& request);

 private:
  // Smooths input_ in place (through scratch_) per prefilter_sigma_mm; returns the buffer
  // that holds the result.
  const float* prefilter(const rp_resample_request& request);
  void check_cancelled() const;

  const rp_host* host_;
  bool texture_sampling_;
  int sinc_radius_;
  regpipe_common_cuda::DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  regpipe_common_cuda::DeviceBuffer<float> input_, scratch_, output_;
  regpipe_common_cuda::DeviceBuffer<double> kernel_weights_, coefficients_;
  TextureVolume texture_;
};

}  // namespace regpipe::resample_cuda
