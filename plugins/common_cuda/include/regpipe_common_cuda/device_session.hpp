// Choosing the CUDA device, with the errors a user can act on (shared by the CUDA plugins).
#pragma once

#include <cstddef>
#include <string>

namespace regpipe_common_cuda {

struct DeviceInfo {
  int index = 0;
  int sm_count = 1;
  std::size_t shared_per_block = 48 * 1024;  // the opt-in maximum of dynamic shared memory
  std::size_t l2_bytes = 0;                  // the L2 cache
  std::string name;
};

// Selects device `index` for this thread. Throws rp::Error(RP_DEVICE) naming the problem and
// `cpu_alternative` (the component to use instead, e.g. "cpu.cr") when there is no usable
// device or the index is out of range.
DeviceInfo select_device(int index, const std::string& cpu_alternative);

// Throws rp::Error(RP_OUT_OF_MEMORY) "<what> needs N MiB of device memory; <device> has M MiB
// free" when `bytes` exceed the current device's free memory.
void require_device_memory(std::size_t bytes, const std::string& what, const DeviceInfo& device);

}  // namespace regpipe_common_cuda
