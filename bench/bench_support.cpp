#include "bench_support.hpp"

#if defined(REGPIPE_BENCH_WITH_CUDA)
#include <cuda_runtime.h>
#endif

#include <algorithm>

namespace regpipe::bench {

std::string device_name() {
#if defined(REGPIPE_BENCH_WITH_CUDA)
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return "none";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "unknown";
  return std::string(prop.name) + " (" + std::to_string(prop.multiProcessorCount) + " SMs)";
#else
  return "none (built without CUDA)";
#endif
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  const auto middle = samples.begin() + long(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  return *middle;
}

}  // namespace regpipe::bench
