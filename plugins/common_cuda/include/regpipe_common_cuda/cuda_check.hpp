// CUDA errors become rp::Error(RP_DEVICE) naming the call, the CUDA message and the place;
// plugin.hpp's guard turns them into a status + message at the ABI.
#pragma once

#include <regpipe/plugin.hpp>

#include <cuda_runtime.h>

#include <string>

namespace regpipe_common_cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  const rp_status status = e == cudaErrorMemoryAllocation ? RP_OUT_OF_MEMORY : RP_DEVICE;
  throw rp::Error(status, std::string(call) + " failed: " + cudaGetErrorString(e) + " (" + file + ":" +
                              std::to_string(line) + ")");
}

}  // namespace regpipe_common_cuda

#define RP_CUDA_CHECK(call)                                                                   \
  do {                                                                                        \
    const cudaError_t rp_cuda_status_ = (call);                                               \
    if (rp_cuda_status_ != cudaSuccess)                                                       \
      ::regpipe_common_cuda::throw_cuda_error(rp_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define RP_CUDA_CHECK_LAUNCH(what) RP_CUDA_CHECK(cudaGetLastError())
