// The resample.cpu component: out(p) = input(matrix * p) for every output voxel centre, with
// an optional Gaussian prefilter of the input, threaded over output z slices.
#pragma once

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>

namespace regpipe::resample {

class CpuResampler {
 public:
  CpuResampler(const rp_host* host, const rp::Params& params);
  void resample(const rp_resample_request& request);

 private:
  bool cancel_requested() const;

  const rp_host* host_;
  unsigned threads_;  // 0 = one per hardware thread
  int sinc_radius_;
};

}  // namespace regpipe::resample
