#include "process/cuda_device_count.hpp"

#include <dlfcn.h>

namespace regpipe {
namespace {

// The driver API's calls used here, by their stable C names (cuda.h: CUresult is an int enum,
// CUDA_SUCCESS 0, CUDA_ERROR_NO_DEVICE 100; CUdevice an int, CUcontext a pointer).
struct DriverApi {
  int (*init)(unsigned) = nullptr;
  int (*device_count)(int*) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*retain_primary_context)(void**, int) = nullptr;
};

// Null without a driver. The library stays loaded: unloading a started driver is not supported.
const DriverApi* driver_api() {
  static const DriverApi* api = [] () -> const DriverApi* {
    void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver == nullptr) return nullptr;
    static DriverApi loaded;
    loaded.init = reinterpret_cast<int (*)(unsigned)>(::dlsym(driver, "cuInit"));
    loaded.device_count = reinterpret_cast<int (*)(int*)>(::dlsym(driver, "cuDeviceGetCount"));
    loaded.device_get = reinterpret_cast<int (*)(int*, int)>(::dlsym(driver, "cuDeviceGet"));
    loaded.retain_primary_context =
        reinterpret_cast<int (*)(void**, int)>(::dlsym(driver, "cuDevicePrimaryCtxRetain"));
    return &loaded;
  }();
  return api;
}

}  // namespace

CudaDeviceCount count_cuda_devices() {
  const DriverApi* api = driver_api();
  if (api == nullptr) return {0, "no NVIDIA driver (libcuda.so.1 not found)"};
  CudaDeviceCount out;
  if (api->init == nullptr || api->device_count == nullptr) {
    out.why_none = "the NVIDIA driver's libcuda.so.1 lacks cuInit";
  } else if (const int status = api->init(0); status == 100) {
    out.why_none = "no CUDA device";
  } else if (status != 0) {
    out.why_none = "the NVIDIA driver could not start (CUresult " + std::to_string(status) + ")";
  } else if (api->device_count(&out.count) != 0 || out.count <= 0) {
    out.count = 0;
    out.why_none = "no CUDA device";
  }
  return out;
}

std::vector<int> start_cuda_contexts(const std::vector<int>& devices) {
  std::vector<int> started;
  const CudaDeviceCount seen = count_cuda_devices();  // starts the driver
  const DriverApi* api = driver_api();
  if (seen.count == 0 || api->device_get == nullptr || api->retain_primary_context == nullptr) return started;
  for (int index : devices) {
    int device = 0;
    void* context = nullptr;
    if (index < 0 || index >= seen.count || api->device_get(&device, index) != 0) continue;
    if (api->retain_primary_context(&context, device) == 0) started.push_back(index);
  }
  return started;
}

}  // namespace regpipe
