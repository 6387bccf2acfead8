#include "bench_support.hpp"

#if defined(REGPIPE_BENCH_WITH_CUDA)
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cmath>

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

Image resample_onto(const Image& image, const std::array<uint32_t, 3>& dims, ResamplerInstance& resampler) {
  const Eigen::Vector3d spacing = image.spacing();
  Image out;
  out.dims = dims;
  out.voxel_to_world = image.voxel_to_world;
  std::array<double, 3> sigma{};
  for (int a = 0; a < 3; ++a) {
    const double extent = spacing[a] * double(image.dims[a] - 1);
    const double step = dims[a] > 1 ? extent / double(dims[a] - 1) : spacing[a];
    out.voxel_to_world.col(a).head<3>() *= step / spacing[a];
    sigma[a] = std::sqrt(std::max(0.0, step * step - spacing[a] * spacing[a])) / 2.3548200450309493;
  }
  out.data.assign(out.voxel_count(), 0.0f);
  const rp_image input = image.view();
  rp_resample_request req{};
  req.size = sizeof(req);
  req.input = &input;
  for (int a = 0; a < 3; ++a) {
    req.out_dims[a] = dims[a];
    req.prefilter_sigma_mm[a] = sigma[a];
  }
  for (int i = 0; i < 16; ++i) req.out_voxel_to_world[i] = out.voxel_to_world(i / 4, i % 4);
  req.out_data = out.data.data();
  req.interpolation = RP_INTERP_TRILINEAR;
  resampler.resample(req);
  return out;
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0.0;
  const auto middle = samples.begin() + long(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  return *middle;
}

}  // namespace regpipe::bench
