#include "regpipe_common_cuda/cuda_check.hpp"
#include "regpipe_common_cuda/device_session.hpp"

namespace regpipe_common_cuda {

DeviceInfo select_device(int index, const std::string& cpu_alternative) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    throw rp::Error(RP_DEVICE, std::string("no CUDA device (") +
                                   (e != cudaSuccess ? cudaGetErrorString(e) : "none found") +
                                   "): use " + cpu_alternative + ", its CPU counterpart");
  if (index < 0 || index >= count)
    throw rp::Error(RP_DEVICE, "device=" + std::to_string(index) + " but " + std::to_string(count) +
                                   " CUDA device(s) are present (0.." + std::to_string(count - 1) +
                                   "); or use " + cpu_alternative + ", its CPU counterpart");
  RP_CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  RP_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return {index, prop.multiProcessorCount, prop.sharedMemPerBlockOptin, prop.name};
}

}  // namespace regpipe_common_cuda
