#include "regpipe_common_cuda/cuda_check.hpp"
#include "regpipe_common_cuda/device_session.hpp"

#include <cstdio>

namespace regpipe_common_cuda {

namespace {

// Why CUDA cannot start, in the words a user without a GPU expects: the CUDA runtime says
// "driver version is insufficient" when there is no driver at all.
std::string no_gpu_reason(cudaError_t e) {
  if (e == cudaSuccess || e == cudaErrorNoDevice) return "no GPU: this machine has no CUDA device";
  if (e == cudaErrorInsufficientDriver)
    return "no GPU: this machine has no NVIDIA driver, or one too old for CUDA " +
           std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
  return std::string("no GPU: CUDA could not start (") + cudaGetErrorString(e) + ")";
}

}  // namespace

DeviceInfo select_device(int index, const std::string& cpu_alternative) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    throw rp::Error(RP_DEVICE, no_gpu_reason(e) + "; use " + cpu_alternative + ", its CPU counterpart");
  if (index < 0 || index >= count)
    throw rp::Error(RP_DEVICE, "device=" + std::to_string(index) + " but " + std::to_string(count) +
                                   " CUDA device(s) are present (0.." + std::to_string(count - 1) +
                                   "); or use " + cpu_alternative + ", its CPU counterpart");
  RP_CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  RP_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return {index,      prop.multiProcessorCount, prop.sharedMemPerBlockOptin, std::size_t(prop.l2CacheSize),
          prop.name,  prop.major,               prop.minor,                  prop.totalGlobalMem};
}

void describe_device(const DeviceInfo& device, rp_device_info& out) {
  out.device = device.index;
  std::snprintf(out.name, sizeof(out.name), "%s", device.name.c_str());
  out.compute_major = device.compute_major;
  out.compute_minor = device.compute_minor;
  out.memory_bytes = device.memory_bytes;
  int driver = 0;
  out.driver_version = cudaDriverGetVersion(&driver) == cudaSuccess ? driver : 0;
  out.runtime_version = CUDART_VERSION;
}

void require_device_memory(std::size_t bytes, const std::string& what, const DeviceInfo& device) {
  std::size_t free_bytes = 0, total_bytes = 0;
  RP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    throw rp::Error(RP_OUT_OF_MEMORY, what + " needs " + std::to_string(bytes >> 20) + " MiB of device memory; " +
                                          device.name + " has " + std::to_string(free_bytes >> 20) + " MiB free");
}

}  // namespace regpipe_common_cuda
