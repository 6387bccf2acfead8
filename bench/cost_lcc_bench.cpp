// The dense evaluation of ANTs' neighbourhood CC (cost + ANTs' own-window gradient, images in
// device memory, RP_EXT_DENSE_COST) for cuda.lcc's two schemes, Luo et al. 2015's (a thread
// per voxel summing its (2r+1)^3 window from textures) and ours (separable running sums), on
// 128^3 and 256^3 smooth random images at radius 2, 4, 5 and 8; cpu.lcc on this host's cores
// (host memory, the same request) for reference. A Markdown table on stdout.
//
//   regpipe_bench_lcc [--quick] [--no-cpu] [--cpu-threads N]
//
// Time: the median of repeated evaluate_dense calls (each synchronises) after one warm-up
// call; repetitions stop after 1 s of samples or 20 calls, at least 3 (--quick: 128^3 only,
// 2 calls). Under 2 minutes on an H100 with 16 host cores.
#include <regpipe/host/components.hpp>

#include "bench_support.hpp"

#include <CLI/CLI.hpp>

#ifdef REGPIPE_BENCH_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <thread>

using namespace regpipe;

namespace {

// Smooth random images: a sum of random plane waves plus a little noise, the moving one a
// shifted, rescaled copy with its own noise (windows neither flat nor perfectly correlated).
void make_pair(uint32_t n, std::vector<float>& fixed, std::vector<float>& moving) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<float> noise(0.f, 3.f);
  struct Wave {
    double kx, ky, kz, phase, amplitude;
  };
  std::vector<Wave> waves;
  for (int w = 0; w < 6; ++w) waves.push_back({0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng), 3 * u(rng), 40 + 20 * u(rng)});
  const std::size_t voxels = std::size_t(n) * n * n;
  fixed.resize(voxels);
  moving.resize(voxels);
  for (std::size_t i = 0; i < voxels; ++i) {
    const double x = double(i % n), y = double(i / n % n), z = double(i / (std::size_t(n) * n));
    double f = 500, m = 400;
    for (const Wave& w : waves) {
      f += w.amplitude * std::sin(w.kx * x + w.ky * y + w.kz * z + w.phase);
      m += 0.8 * w.amplitude * std::sin(w.kx * (x + 1.5) + w.ky * (y - 1) + w.kz * z + w.phase);
    }
    fixed[i] = float(f) + noise(rng);
    moving[i] = float(m) + noise(rng);
  }
}

double median_ms(const std::function<void()>& call, bool quick) {
  call();  // warm-up
  std::vector<double> samples;
  double total = 0;
  while (samples.size() < (quick ? 2u : 3u) || (total < 1.0 && samples.size() < 20)) {
    const auto start = std::chrono::steady_clock::now();
    call();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    samples.push_back(s * 1e3);
    total += s;
  }
  return bench::median(samples);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuda.lcc (luo, separable) and cpu.lcc: dense CC evaluation times"};
  bool quick = false, no_cpu = false;
  int cpu_threads = 0;
  app.add_flag("--quick", quick, "128^3 only, 2 calls a case");
  app.add_flag("--no-cpu", no_cpu, "skip cpu.lcc");
  app.add_option("--cpu-threads", cpu_threads, "cpu.lcc's threads (0 = all cores)");
  CLI11_PARSE(app, argc, argv);

  PluginHost host{PluginSearchOptions{}};
  HostServices services(RP_LOG_WARNING, false);
  auto make_cost = [&](const std::string& id, const std::map<std::string, std::string>& params) {
    const Component& c = host.require(RP_KIND_COST, id);
    return std::make_unique<CostInstance>(c, services, resolve_params(c, params));
  };
  std::printf("device: %s\n", bench::device_name().c_str());
  std::printf("host: %u hardware threads, cpu.lcc threads=%d\n\n", std::thread::hardware_concurrency(), cpu_threads);
#ifndef REGPIPE_BENCH_WITH_CUDA
  std::printf("built without CUDA: nothing to measure\n");
  return 0;
#else
  try {
    make_cost("cuda.lcc", {});
  } catch (const std::exception& e) {
    std::printf("cuda.lcc unavailable: %s\n", e.what());
    return 0;
  }
  std::printf("Dense evaluation (cost + ANTs gradient, device memory), median ms\n\n");
  bench::print_header("grid, radius", {"luo (ms)", "separable (ms)", "luo / separable", "cpu.lcc (ms)"});
  std::vector<uint32_t> sizes = {128};
  if (!quick) sizes.push_back(256);
  for (const uint32_t n : sizes) {
    std::vector<float> fixed, moving;
    make_pair(n, fixed, moving);
    const std::size_t voxels = fixed.size(), bytes = voxels * sizeof(float);
    float *d_fixed = nullptr, *d_moving = nullptr, *d_gradient = nullptr;
    if (cudaMalloc(&d_fixed, bytes) != cudaSuccess || cudaMalloc(&d_moving, bytes) != cudaSuccess ||
        cudaMalloc(&d_gradient, 3 * bytes) != cudaSuccess) {
      std::printf("cudaMalloc failed\n");
      return 1;
    }
    cudaMemcpy(d_fixed, fixed.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_moving, moving.data(), bytes, cudaMemcpyHostToDevice);
    std::vector<float> host_gradient(3 * voxels);
    rp_dense_cost_request r{};
    r.dims[0] = r.dims[1] = r.dims[2] = n;
    for (int k = 0; k < 16; ++k) r.voxel_to_world[k] = k % 5 == 0 ? 1.0 : 0.0;
    double cost = 0;
    r.cost_out = &cost;
    for (const int radius : {2, 4, 5, 8}) {
      double ms[2] = {0, 0};
      const char* schemes[2] = {"luo", "separable"};
      double costs[2] = {0, 0};
      for (int s = 0; s < 2; ++s) {
        auto gpu = make_cost("cuda.lcc", {{"radius", std::to_string(radius)}, {"scheme", schemes[s]}});
        rp_dense_cost_request d = r;
        d.memory = RP_MEMORY_DEVICE;
        d.device = 0;
        d.fixed = d_fixed;
        d.moving = d_moving;
        d.gradient_out = d_gradient;
        ms[s] = median_ms([&] { gpu->evaluate_dense(d); }, quick);
        costs[s] = cost;
      }
      std::string cpu_ms = "-";
      if (!no_cpu) {
        auto cpu = make_cost("cpu.lcc", {{"radius", std::to_string(radius)}, {"threads", std::to_string(cpu_threads)}});
        rp_dense_cost_request h = r;
        h.memory = RP_MEMORY_HOST;
        h.fixed = fixed.data();
        h.moving = moving.data();
        h.gradient_out = host_gradient.data();
        char text[32];
        std::snprintf(text, sizeof(text), "%.1f", median_ms([&] { cpu->evaluate_dense(h); }, true));
        cpu_ms = text;
        if (std::fabs(costs[0] - cost) > 1e-9 * std::fabs(cost) || std::fabs(costs[1] - cost) > 1e-9 * std::fabs(cost))
          std::printf("WARNING: costs differ: luo %.12g separable %.12g cpu %.12g\n", costs[0], costs[1], cost);
      }
      std::printf("| %u^3, r=%d | %.2f | %.2f | %.1fx | %s |\n", n, radius, ms[0], ms[1], ms[0] / ms[1],
                  cpu_ms.c_str());
      std::fflush(stdout);
    }
    cudaFree(d_fixed);
    cudaFree(d_moving);
    cudaFree(d_gradient);
  }
  return 0;
#endif
}
