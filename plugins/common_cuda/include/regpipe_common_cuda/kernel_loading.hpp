// CUDA loads a kernel on its first launch (lazy loading, the runtime's default): in a fresh
// process each first launch waits for its load, ~3.5 ms over a registration's kernels on an
// H100 host (bench/results/registration.md). A component loads the kernels it will launch
// when it is created instead: `regpipe run` creates the components while it reads the images.
#pragma once

#include "regpipe_common_cuda/cuda_check.hpp"

#include <initializer_list>

namespace regpipe_common_cuda {

// Loads each kernel (`cudaFuncGetAttributes` makes the runtime load it) on the current device.
inline void load_kernels(std::initializer_list<const void*> kernels) {
  for (const void* kernel : kernels) {
    cudaFuncAttributes attributes{};
    RP_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  }
}

}  // namespace regpipe_common_cuda
