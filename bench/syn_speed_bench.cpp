// Issue 16's speed targets on one pair: greedy SyN with local CC on the GPU (cuda.lcc radius
// 4, optim.syn device: cuda) on a 256x256x160 pair at 1 mm, four levels (shrink 8/4/2/1,
// smoothing 3/2/1/0 voxels), and the CC gradient evaluation against the device's
// memory-bandwidth floor. Markdown tables on stdout.
//
//   regpipe_bench_syn [--data DIR] [--repeats N] [--fixed-iterations N] [--cpu] [--write-pair DIR]
//
// The pair, made here: chris_t1 (DIR/chris_t1.nii.gz; DIR defaults to $REGPIPE_TEST_DATA, else
// a smooth random texture) on an axis-aligned 1 mm grid of 256x256x160 voxels centred on the
// head, and the same warped by a known diffeomorphism, exp(-v) of a random smooth velocity v
// (random_smooth_diffeomorphism: 6 mm at most, noise length scale 16 mm), so that the true
// forward field is exp(v): the whole-SyN run's forward field is scored against it over the
// head. --write-pair writes both as fixed.nii.gz and moving.nii.gz (float32) for
// `regpipe run bench/syn/speed_pipeline.yaml` and FireANTs.
//
// Timed (each the median of --repeats runs after one warm-up run):
//   - cuda.lcc's evaluate_dense (cost + ANTs' gradient, images in device memory) against the
//     floor: the bytes a dense CC evaluation must move at least, the two float images read
//     once and the float gradient (3 per voxel) written once, 20 bytes per voxel, over the
//     peak bandwidth (memory clock x bus width x 2, from the CUDA runtime) and over a measured
//     device-to-device copy;
//   - whole SyN through the plugin host (optim.syn device: cuda + cuda.lcc: host images in,
//     forward and inverse fields out) with ANTs' defaults: iterations 100x70x50x20,
//     convergence [1e-6, 10];
//   - the same loop (syn_register_device with cuda.lcc on device memory, what optim.syn runs)
//     with --fixed-iterations per level and the convergence test off: ms per iteration per
//     level, and how much of it the two CC evaluations take;
//   - with --cpu: the CPU loop (syn_register, its own CC radius 4, this host's cores) against
//     the device loop on the pair at 2 mm (128x128x80), the fixed-iteration schedule once.
#include <regpipe/host/components.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pyramid.hpp>

#include "bench_support.hpp"

#include <regpipe_common/fields/abi_views.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/fields/random_diffeomorphism.hpp>
#include <regpipe_common/fields/scaling_squaring.hpp>
#include <regpipe_common/fields/warp_image.hpp>
#include <regpipe_common/syn/syn_levels.hpp>
#include <regpipe_common/syn/syn_registration.hpp>

#ifdef REGPIPE_BENCH_WITH_CUDA
#include <regpipe_common_cuda/device_syn.hpp>

#include <cuda_runtime.h>
#endif

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <thread>

using namespace regpipe;
namespace rc = regpipe_common;
namespace syn = regpipe_common::syn;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

rc::FieldGeometry geometry_of(const Image& image) {
  rc::FieldGeometry g{{int(image.dims[0]), int(image.dims[1]), int(image.dims[2])}, {}};
  for (int i = 0; i < 16; ++i) g.voxel_to_world[i] = image.voxel_to_world(i / 4, i % 4);
  return g;
}

struct Pair {
  std::string source;
  Image fixed, moving;
  rc::DisplacementField truth_forward;  // exp(v): moving(x + truth_forward(x)) = fixed(x)
};

// An axis-aligned grid of `dims` voxels of `mm`, centred on `centre` (LPS).
Image centred_grid(const std::array<uint32_t, 3>& dims, double mm, const Eigen::Vector3d& centre) {
  Image g;
  g.dims = dims;
  g.voxel_to_world = Eigen::Matrix4d::Identity();
  for (int a = 0; a < 3; ++a) {
    g.voxel_to_world(a, a) = mm;
    g.voxel_to_world(a, 3) = centre[a] - 0.5 * mm * double(dims[a] - 1);
  }
  return g;
}

// chris_t1 (anti-aliased for the grid's voxel size as the pyramid does, then trilinear) or,
// without it, smoothed uniform noise; then the moving image through a known diffeomorphism.
Pair make_pair(const std::filesystem::path& t1_path, const std::array<uint32_t, 3>& dims, double mm) {
  Pair p;
  if (!t1_path.empty() && std::filesystem::exists(t1_path)) {
    const Image t1 = read_image(t1_path);
    const Eigen::Vector3d half(0.5 * (t1.dims[0] - 1), 0.5 * (t1.dims[1] - 1), 0.5 * (t1.dims[2] - 1));
    const Eigen::Vector4d centre = t1.voxel_to_world * Eigen::Vector4d(half.x(), half.y(), half.z(), 1.0);
    p.fixed = centred_grid(dims, mm, centre.head<3>());
    const std::vector<float> smooth = syn::smoothed_image(t1.view(), pyramid_sigma_mm(t1, mm)[0], true);
    rp_image view = t1.view();
    view.data = smooth.data();
    const rc::FieldGeometry grid = geometry_of(p.fixed);
    p.fixed.data = rc::warp_image(view, rc::view_of(rc::zero_field(grid)), grid, 0.0f);
    p.source = "chris_t1 (" + t1_path.string() + ")";
  } else {
    p.fixed = centred_grid(dims, mm, Eigen::Vector3d::Zero());
    p.fixed.data.resize(p.fixed.voxel_count());
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> noise(0.0f, 100.0f);
    for (float& v : p.fixed.data) v = noise(rng);
    const double sigma[3] = {3.0, 3.0, 3.0};
    rc::smooth_image_gaussian(p.fixed.data, geometry_of(p.fixed).dims, sigma);
    p.source = "smoothed uniform noise (no chris_t1.nii.gz found)";
  }
  // As the known-truth tests (tests/support/syn_known_warp.hpp): moving = fixed through exp(-v).
  rc::RandomDiffeomorphismOptions o;
  o.seed = 21;
  o.smoothing_sigma_voxels = 16.0 / mm;
  o.max_displacement_mm = 6.0;
  const rc::FieldGeometry grid = geometry_of(p.fixed);
  rc::RandomDiffeomorphism truth = rc::random_smooth_diffeomorphism(grid, o);
  for (float& c : truth.velocity.vectors) c = -c;
  p.moving = p.fixed;
  const rc::DisplacementField minus = rc::exponentiate_velocity(truth.velocity, truth.squarings);
  p.moving.data = rc::warp_image(p.fixed.view(), rc::view_of(minus), grid, 0.0f);
  p.truth_forward = std::move(truth.displacement);
  return p;
}

// ANTs' default SyN schedule: CC radius 4, SyN[0.1, 3, 0], 100x70x50x20, 8x4x2x1, 3x2x1x0 vox.
syn::SynOptions ants_options() {
  syn::SynOptions o;
  o.metric.kind = syn::SynMetricKind::cc;
  o.metric.cc.window.radius_voxels = 4;
  return o;
}

// The same levels with `iterations` each and a convergence window longer than any level (the
// test never decides: every level runs all its iterations).
syn::SynOptions fixed_iteration_options(int iterations) {
  syn::SynOptions o = ants_options();
  for (syn::SynLevel& l : o.levels) l.iterations = iterations;
  o.convergence_window_size = iterations + 1;
  return o;
}

template <class F>
std::vector<double> timed_runs(int repeats, F&& run) {
  run();  // warm-up: CUDA context, kernels, the plugins' buffers
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    run();
    seconds.push_back(seconds_since(start));
  }
  return seconds;
}

// Mean |forward - truth| over the head (fixed above foreground_threshold), mm; and of the identity.
std::pair<double, double> endpoint_error_mm(const Pair& p, const rc::DisplacementField& forward) {
  const float threshold = foreground_threshold(p.fixed);
  double error = 0.0, identity = 0.0;
  std::size_t count = 0;
  const rc::DisplacementFieldView f = rc::view_of(forward), t = rc::view_of(p.truth_forward);
  for (std::size_t i = 0; i < p.fixed.voxel_count(); ++i) {
    if (!(p.fixed.data[i] > threshold)) continue;
    error += rc::norm(rc::vector_at(f, i) - rc::vector_at(t, i));
    identity += rc::norm(rc::vector_at(t, i));
    ++count;
  }
  return {error / double(std::max<std::size_t>(count, 1)), identity / double(std::max<std::size_t>(count, 1))};
}

std::string level_name(const syn::SynLevelReport& l) {
  return "shrink " + std::to_string(l.shrink_factor) + " (" + std::to_string(l.grid.nx) + "x" +
         std::to_string(l.grid.ny) + "x" + std::to_string(l.grid.nz) + ")";
}

#ifdef REGPIPE_BENCH_WITH_CUDA

struct Bandwidth {
  double peak = 0.0;           // bytes per second, memory clock x bus width x 2 (DDR)
  double copy = 0.0;           // measured: a device-to-device copy's bytes read + written per second
  int clock_khz = 0, bus_bits = 0;
};

Bandwidth device_bandwidth() {
  Bandwidth b;
  cudaDeviceGetAttribute(&b.clock_khz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&b.bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
  b.peak = 2.0 * double(b.clock_khz) * 1e3 * double(b.bus_bits) / 8.0;
  const std::size_t bytes = std::size_t(1) << 30;
  void *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, bytes) == cudaSuccess && cudaMalloc(&dst, bytes) == cudaSuccess) {
    std::vector<double> seconds = timed_runs(5, [&] {
      cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
      cudaDeviceSynchronize();
    });
    b.copy = 2.0 * double(bytes) / bench::median(seconds);
  }
  cudaFree(src);
  cudaFree(dst);
  return b;
}

// A pair's images in device memory and a gradient buffer.
struct DevicePair {
  float *fixed = nullptr, *moving = nullptr, *gradient = nullptr;
  explicit DevicePair(const Pair& p) {
    const std::size_t bytes = p.fixed.voxel_count() * sizeof(float);
    if (cudaMalloc(&fixed, bytes) != cudaSuccess || cudaMalloc(&moving, bytes) != cudaSuccess ||
        cudaMalloc(&gradient, 3 * bytes) != cudaSuccess)
      throw std::runtime_error("cudaMalloc failed");
    cudaMemcpy(fixed, p.fixed.data.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(moving, p.moving.data.data(), bytes, cudaMemcpyHostToDevice);
  }
  ~DevicePair() {
    cudaFree(fixed);
    cudaFree(moving);
    cudaFree(gradient);
  }
};

// syn_register_device with `cost` evaluated on device memory (optim.syn's device: cuda loop);
// the CC's wall time is added to *metric_seconds per level (the observer closes each
// iteration, so the evaluations since the last call belong to its level).
syn::SynResult device_syn(const Pair& p, const syn::SynOptions& o, CostInstance& cost,
                          std::vector<double>* metric_seconds = nullptr) {
  double pending = 0.0;
  const regpipe_common_cuda::DeviceSynMetric metric = [&](const rc::FieldGeometry& grid, const float* fixed,
                                                          const float* moving, const float* mask, float* gradient,
                                                          cudaStream_t) {
    double value = 0.0;
    const auto start = Clock::now();
    cost.evaluate_dense(rc::dense_cost_request(grid, {fixed, moving, mask, &value, gradient}, RP_MEMORY_DEVICE, 0));
    pending += seconds_since(start);
    return value;
  };
  const syn::SynObserver observer = [&](int level, int, double) {
    if (metric_seconds != nullptr) {
      metric_seconds->resize(std::max<std::size_t>(metric_seconds->size(), std::size_t(level) + 1), 0.0);
      (*metric_seconds)[std::size_t(level)] += pending;
    }
    pending = 0.0;
    return true;
  };
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  syn::SynResult r = regpipe_common_cuda::syn_register_device(p.fixed.view(), p.moving.view(), nullptr, o, metric,
                                                              nullptr, observer, stream);
  cudaStreamDestroy(stream);
  return r;
}

void print_levels(const syn::SynResult& r) {
  for (const syn::SynLevelReport& l : r.levels)
    std::printf("| %s | %zu%s | %.3f | %.4f -> %.4f |\n", level_name(l).c_str(), l.metric_values.size(),
                l.converged ? " (converged)" : "", l.seconds, l.metric_values.front(), l.metric_values.back());
}

#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"issue 16's SyN speed benchmark: cuda.lcc + optim.syn device: cuda on a 256x256x160 pair at 1 mm"};
  std::string data_dir, write_pair;
  int repeats = 5, fixed_iterations = 10;
  bool cpu = false;
  app.add_option("--data", data_dir, "folder holding chris_t1.nii.gz (default $REGPIPE_TEST_DATA)");
  app.add_option("--repeats", repeats, "timed runs of each case (after a warm-up run)")->check(CLI::PositiveNumber);
  app.add_option("--fixed-iterations", fixed_iterations, "iterations per level of the per-iteration table")
      ->check(CLI::PositiveNumber);
  app.add_flag("--cpu", cpu, "also the CPU loop against the device loop at 2 mm (128x128x80)");
  app.add_option("--write-pair", write_pair, "write the 1 mm pair to this folder (fixed.nii.gz, moving.nii.gz)");
  CLI11_PARSE(app, argc, argv);
  if (data_dir.empty() && std::getenv("REGPIPE_TEST_DATA") != nullptr) data_dir = std::getenv("REGPIPE_TEST_DATA");
  const std::filesystem::path t1 =
      data_dir.empty() ? std::filesystem::path() : std::filesystem::path(data_dir) / "chris_t1.nii.gz";

  std::printf("device: %s\nhost: %u hardware threads\n", bench::device_name().c_str(),
              std::thread::hardware_concurrency());
  const auto made = Clock::now();
  const Pair pair = make_pair(t1, {256, 256, 160}, 1.0);
  std::printf("pair: %s on 256x256x160 voxels of 1 mm; moving = fixed warped by exp(-v), 6 mm at most, noise "
              "length scale 16 mm (made in %.1f s)\n",
              pair.source.c_str(), seconds_since(made));
  if (!write_pair.empty()) {
    std::filesystem::create_directories(write_pair);
    write_image(pair.fixed, std::filesystem::path(write_pair) / "fixed.nii.gz");
    write_image(pair.moving, std::filesystem::path(write_pair) / "moving.nii.gz");
    std::printf("wrote %s/fixed.nii.gz and moving.nii.gz\n", write_pair.c_str());
  }
#ifndef REGPIPE_BENCH_WITH_CUDA
  std::printf("built without CUDA: nothing to measure\n");
  return 0;
#else
  PluginHost host{PluginSearchOptions{}};
  HostServices services(RP_LOG_WARNING, false);
  auto make = [&](int32_t kind, const std::string& id, const std::map<std::string, std::string>& params) {
    const Component& c = host.require(kind, id);
    return std::make_pair(&c, resolve_params(c, params));
  };
  std::unique_ptr<CostInstance> lcc;
  try {
    const auto [c, params] = make(RP_KIND_COST, "cuda.lcc", {{"radius", "4"}});
    lcc = std::make_unique<CostInstance>(*c, services, params);
  } catch (const std::exception& e) {
    std::printf("cuda.lcc unavailable: %s\n", e.what());
    return 0;
  }

  // The CC gradient against the floor.
  const Bandwidth bw = device_bandwidth();
  const std::size_t n = pair.fixed.voxel_count();
  const double floor_bytes = double(n) * (2 * sizeof(float) + 3 * sizeof(float));
  std::printf("\npeak memory bandwidth %.3f TB/s (memory clock %d MHz x %d-bit bus x 2); measured "
              "device-to-device copy %.3f TB/s (read + written)\n",
              bw.peak * 1e-12, bw.clock_khz / 1000, bw.bus_bits, bw.copy * 1e-12);
  std::printf("floor of one dense CC evaluation: fixed and moving read once (float), the gradient written once "
              "(3 floats): 20 B x %zu voxels = %.1f MB\n\n",
              n, floor_bytes * 1e-6);
  bench::print_header("CC gradient, 256x256x160, radius 4", {"evaluate_dense (ms)", "floor at peak (ms)",
                                                              "/ floor", "floor at copy rate (ms)", "/ that"});
  {
    const DevicePair d(pair);
    const rc::FieldGeometry grid = geometry_of(pair.fixed);
    for (const char* scheme : {"separable", "luo"}) {
      const auto [c, params] = make(RP_KIND_COST, "cuda.lcc", {{"radius", "4"}, {"scheme", scheme}});
      CostInstance cost(*c, services, params);
      double value = 0.0;
      const rp_dense_cost_request r =
          rc::dense_cost_request(grid, {d.fixed, d.moving, nullptr, &value, d.gradient}, RP_MEMORY_DEVICE, 0);
      const double ms = 1e3 * bench::median(timed_runs(std::max(repeats, 20), [&] { cost.evaluate_dense(r); }));
      const double at_peak = 1e3 * floor_bytes / bw.peak, at_copy = 1e3 * floor_bytes / bw.copy;
      std::printf("| cuda.lcc scheme=%s | %.3f | %.4f | %.1fx | %.4f | %.1fx |\n", scheme, ms, at_peak, ms / at_peak,
                  at_copy, ms / at_copy);
      std::fflush(stdout);
    }
  }

  // Whole SyN through the plugin host, ANTs' defaults.
  {
    const auto [oc, oparams] = make(RP_KIND_OPTIMIZER, "optim.syn", {{"device", "cuda"}});
    OptimizerInstance optimizer(*oc, services, oparams);
    rc::DisplacementField forward = rc::zero_field(geometry_of(pair.fixed)), inverse = forward;
    rp_field forward_out = rc::field_view(forward), inverse_out = rc::field_view(inverse);
    const rp_image fixed = pair.fixed.view(), moving = pair.moving.view();
    const std::vector<double> s = timed_runs(repeats, [&] {
      optimizer.register_deformable(fixed, moving, nullptr, nullptr, *lcc, forward_out, &inverse_out);
    });
    std::printf("\nWhole SyN, ANTs' defaults (CC radius 4, SyN[0.1,3,0], 100x70x50x20 [1e-6, 10], 8x4x2x1, "
                "3x2x1x0 vox), optim.syn device: cuda + cuda.lcc through the plugin host (host images in, "
                "forward and inverse fields out), %d runs\n\n",
                repeats);
    bench::print_header("", {"median (s)", "min (s)", "max (s)"});
    std::printf("| whole SyN | %.3f | %.3f | %.3f |\n", bench::median(s), *std::min_element(s.begin(), s.end()),
                *std::max_element(s.begin(), s.end()));
    const auto [error, identity] = endpoint_error_mm(pair, forward);
    std::printf("\nIts forward field against the truth: mean endpoint error over the head %.3f mm (identity %.3f mm)\n",
                error, identity);
    const auto start = Clock::now();
    const syn::SynResult r = device_syn(pair, ants_options(), *lcc);
    const double total = seconds_since(start);
    double levels = 0.0;
    for (const syn::SynLevelReport& l : r.levels) levels += l.seconds;
    std::printf("\nThe same loop (syn_register_device), one run: %.3f s, of which the levels %.3f s and the rest "
                "(upload, final inversions, download) %.3f s\n\n",
                total, levels, total - levels);
    bench::print_header("level", {"iterations run", "seconds", "metric first -> last"});
    print_levels(r);
  }

  // Per iteration, every level running the same fixed number of iterations.
  {
    std::vector<std::vector<double>> per_iteration, metric_share;
    syn::SynResult last;
    for (int run = 0; run <= repeats; ++run) {  // run 0: warm-up
      std::vector<double> metric_seconds;
      last = device_syn(pair, fixed_iteration_options(fixed_iterations), *lcc, &metric_seconds);
      if (run == 0) continue;
      per_iteration.resize(last.levels.size());
      metric_share.resize(last.levels.size());
      for (std::size_t l = 0; l < last.levels.size(); ++l) {
        per_iteration[l].push_back(1e3 * last.levels[l].seconds / double(last.levels[l].metric_values.size()));
        metric_share[l].push_back(1e3 * metric_seconds[l] / double(last.levels[l].metric_values.size()));
      }
    }
    std::printf("\nPer iteration: %d iterations at every level (convergence test off), medians of %d runs; an "
                "iteration evaluates the CC twice (both sides)\n\n",
                fixed_iterations, repeats);
    bench::print_header("level", {"ms per iteration", "of which cuda.lcc (ms)"});
    for (std::size_t l = 0; l < last.levels.size(); ++l)
      std::printf("| %s | %.2f | %.2f |\n", level_name(last.levels[l]).c_str(), bench::median(per_iteration[l]),
                  bench::median(metric_share[l]));
  }

  if (cpu) {
    const Pair small = make_pair(t1, {128, 128, 80}, 2.0);
    const syn::SynOptions o = fixed_iteration_options(fixed_iterations);
    device_syn(small, o, *lcc);  // warm-up
    auto start = Clock::now();
    const syn::SynResult on_device = device_syn(small, o, *lcc);
    const double device_s = seconds_since(start);
    start = Clock::now();
    const syn::SynResult on_host = syn::syn_register(small.fixed.view(), small.moving.view(), o);
    const double host_s = seconds_since(start);
    std::printf("\nCPU loop (syn_register, CC radius 4, %u threads) against the device loop, the pair at 2 mm "
                "(128x128x80), %d iterations per level, one run\n\n",
                std::thread::hardware_concurrency(), fixed_iterations);
    bench::print_header("level", {"CPU ms per iteration", "GPU ms per iteration", "CPU / GPU"});
    for (std::size_t l = 0; l < on_host.levels.size(); ++l) {
      const double h = 1e3 * on_host.levels[l].seconds / double(on_host.levels[l].metric_values.size());
      const double g = 1e3 * on_device.levels[l].seconds / double(on_device.levels[l].metric_values.size());
      std::printf("| %s | %.1f | %.2f | %.0fx |\n", level_name(on_host.levels[l]).c_str(), h, g, h / g);
    }
    std::printf("| whole run (s) | %.2f | %.3f | %.0fx |\n", host_s, device_s, host_s / device_s);
  }
  return 0;
#endif
}
