#include "process/cuda_device_count.hpp"

#include <dlfcn.h>

namespace regpipe {

CudaDeviceCount count_cuda_devices() {
  // The driver API's two calls, by their stable C names (cuda.h: CUresult is an int enum,
  // CUDA_SUCCESS 0, CUDA_ERROR_NO_DEVICE 100).
  using Init = int (*)(unsigned);
  using GetCount = int (*)(int*);
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return {0, "no NVIDIA driver (libcuda.so.1 not found)"};
  const auto init = reinterpret_cast<Init>(::dlsym(driver, "cuInit"));
  const auto get_count = reinterpret_cast<GetCount>(::dlsym(driver, "cuDeviceGetCount"));
  CudaDeviceCount out;
  if (init == nullptr || get_count == nullptr) {
    out.why_none = "the NVIDIA driver's libcuda.so.1 lacks cuInit";
  } else if (const int status = init(0); status == 100) {
    out.why_none = "no CUDA device";
  } else if (status != 0) {
    out.why_none = "the NVIDIA driver could not start (CUresult " + std::to_string(status) + ")";
  } else if (get_count(&out.count) != 0 || out.count <= 0) {
    out.count = 0;
    out.why_none = "no CUDA device";
  }
  // The library stays loaded: unloading a started driver is not supported.
  return out;
}

}  // namespace regpipe
