#include "bench_support.hpp"

#if defined(REGPIPE_BENCH_WITH_CUDA)
#include <cuda_runtime.h>
#endif

#include <regpipe/host/transform.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

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

std::vector<Level> li_kumar_levels(const Image& image, ResamplerInstance& resampler) {
  std::vector<Level> levels;
  for (uint32_t factor : {8u, 4u, 2u, 1u}) {
    const std::array<uint32_t, 3> dims{256 / factor, 256 / factor, 160 / factor};
    const std::string name = std::to_string(factor) + " mm (" + std::to_string(dims[0]) + "x" +
                             std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + ")";
    levels.push_back({double(factor), name, resample_onto(image, dims, resampler)});
  }
  return levels;
}

std::vector<double> small_random_matrices(const Image& reference, size_t k) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::Vector3d centre = centre_of_mass(reference);
  std::vector<double> out;
  for (size_t i = 0; i < k; ++i) {
    AffineParams p = identity_params();
    for (int a = 0; a < 3; ++a) {
      p[a] = u(rng) * 0.1;
      p[3 + a] = u(rng) * 5.0;
    }
    const Eigen::Matrix4d m = params_to_matrix(p, centre);
    for (int j = 0; j < 16; ++j) out.push_back(m(j / 4, j % 4));
  }
  return out;
}

double us_per_eval(CostInstance& cost, const std::vector<double>& matrices, size_t k, int repetitions) {
  std::vector<double> costs(k);
  cost.evaluate(matrices.data(), k, costs.data());
  std::vector<double> samples;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    cost.evaluate(matrices.data(), k, costs.data());
    samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
                      double(k));
  }
  return median(samples);
}

void print_header(const char* first, const std::vector<std::string>& columns) {
  std::printf("| %s |", first);
  for (const auto& c : columns) std::printf(" %s |", c.c_str());
  std::printf("\n|---|");
  for (size_t i = 0; i < columns.size(); ++i) std::printf("---|");
  std::printf("\n");
}

}  // namespace regpipe::bench
