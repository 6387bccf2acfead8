// How many CUDA devices this process sees (CUDA_VISIBLE_DEVICES applies), asked of the NVIDIA
// driver (libcuda.so.1, opened at run time: the framework links no CUDA, and a machine without
// a driver is an ordinary CPU machine). For execution.devices, in the batch supervisor, which
// itself never computes on a device.
#pragma once

#include <string>

namespace regpipe {

struct CudaDeviceCount {
  int count = 0;
  std::string why_none;  // when count is 0: "no NVIDIA driver (libcuda.so.1 not found)", ...
};

CudaDeviceCount count_cuda_devices();

}  // namespace regpipe
