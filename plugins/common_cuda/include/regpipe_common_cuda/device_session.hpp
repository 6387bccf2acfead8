// Choosing the CUDA device, with the errors a user can act on (shared by the CUDA plugins).
#pragma once

#include <regpipe/abi.h>

#include <cstddef>
#include <string>

namespace regpipe_common_cuda {

struct DeviceInfo {
  int index = 0;
  int sm_count = 1;
  std::size_t shared_per_block = 48 * 1024;  // the opt-in maximum of dynamic shared memory
  std::size_t l2_bytes = 0;                  // the L2 cache
  std::string name;
  int compute_major = 0, compute_minor = 0;
  std::size_t memory_bytes = 0;
};

// Selects device `index` for this thread. Throws rp::Error(RP_DEVICE) naming the problem and
// `cpu_alternative` (the component to use instead, e.g. "cpu.cr") when there is no usable
// device or the index is out of range.
DeviceInfo select_device(int index, const std::string& cpu_alternative);

// The device for a report (RP_EXT_DEVICE_INFO): its name, compute capability and memory, the
// driver's CUDA version and the runtime this plugin was built with.
void describe_device(const DeviceInfo& device, rp_device_info& out);

// Throws rp::Error(RP_OUT_OF_MEMORY) "<what> needs N MiB of device memory; <device> has M MiB
// free" when `bytes` exceed the current device's free memory.
void require_device_memory(std::size_t bytes, const std::string& what, const DeviceInfo& device);

}  // namespace regpipe_common_cuda
