// The CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies), asked of the NVIDIA
// driver (libcuda.so.1, opened at run time: the framework links no CUDA, and a machine without
// a driver is an ordinary CPU machine). For execution.devices, in the batch supervisor, which
// itself never computes on a device; and for `regpipe serve`, whose waiting processes start
// the driver and the devices' contexts before their command comes.
#pragma once

#include <string>
#include <vector>

namespace regpipe {

struct CudaDeviceCount {
  int count = 0;
  std::string why_none;  // when count is 0: "no NVIDIA driver (libcuda.so.1 not found)", ...
};

CudaDeviceCount count_cuda_devices();

// Starts the driver and retains the primary context of each of `devices` that exists (the
// context every CUDA runtime in the process then shares, plugins' included); returns the
// indices started. The contexts stay until the process ends.
std::vector<int> start_cuda_contexts(const std::vector<int>& devices);

}  // namespace regpipe
