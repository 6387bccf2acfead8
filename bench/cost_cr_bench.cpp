// Microseconds per correlation-ratio evaluation for every cuda.cr scheme (and cpu.cr with
// --cpu): Li & Kumar 2014 section IV's experiments on today's hardware. The volume is their
// 256x256x160 "1 mm" grid and its 8/4/2 mm levels (128x128x80, 64x64x40, 32x32x20), here
// chris_t1 resampled onto those grids over its extent, registered to itself (the self-pair)
// under small random transforms. Per level and batch size, versus bins and versus thread
// blocks; Markdown tables on stdout, every number in <out>/cost_cr.csv.
//
//   regpipe_bench_cr [--data DIR] [--out DIR] [--quick] [--cpu [--cpu-threads N]] [--schemes S ...]
//
// Time: the median over repetitions of the wall time of one batched evaluate call (the k
// maps, the kernels, the final formula and the results: what a registration waits for)
// divided by k, after one warm-up call. The per-call cost (what FLIRT's thousands of small
// calls pay) is reported separately: k=1 at 8 mm, and its excess over a batched evaluation.
#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform.hpp>

#include "bench_support.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>

using namespace regpipe;
namespace fs = std::filesystem;

namespace {

struct Bench {
  PluginHost host{PluginSearchOptions{}};
  HostServices services;
  int repetitions = 21;
  int cpu_threads = 0;
  std::vector<bench::Level> levels;
  std::vector<double> matrices;
  std::ofstream csv;

  std::unique_ptr<CostInstance> make(const std::string& id, const std::map<std::string, std::string>& params) {
    const Component& c = host.require(RP_KIND_COST, id);
    return std::make_unique<CostInstance>(c, services, resolve_params(c, params));
  }

  // One measurement, also written to the CSV. scheme "" is cpu.cr.
  double run(const std::string& experiment, const std::string& scheme, size_t level, int bins, size_t k,
             int blocks = 0) {
    std::map<std::string, std::string> params{{"bins", std::to_string(bins)}};
    if (scheme.empty()) {
      params["threads"] = std::to_string(cpu_threads);
    } else {
      params["scheme"] = scheme;
      params["blocks"] = std::to_string(blocks);
    }
    auto cost = make(scheme.empty() ? "cpu.cr" : "cuda.cr", params);
    cost->set_reference(levels[level].image, nullptr);
    cost->set_moving(levels[level].image, nullptr);
    const double us = bench::us_per_eval(*cost, matrices, k, repetitions);
    const auto& dims = levels[level].image.dims;
    csv << experiment << "," << (scheme.empty() ? "cpu.cr" : "cuda.cr") << "," << scheme << "," << levels[level].mm
        << "," << dims[0] << "x" << dims[1] << "x" << dims[2] << "," << bins << "," << k << "," << blocks << "," << us
        << "\n";
    return us;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"regpipe correlation-ratio cost benchmark (Li & Kumar 2014's experiments)"};
  const char* env_data = std::getenv("REGPIPE_TEST_DATA");
  std::string data = env_data != nullptr ? env_data : "../shared/data", out = ".";
  bool quick = false, cpu = false;
  Bench b;
  std::vector<std::string> schemes = {"scheme1", "scheme2", "scheme3a", "scheme3b", "scheme4", "scheme5", "fused"};
  app.add_option("--data", data, "folder with chris_t1.nii.gz (default $REGPIPE_TEST_DATA or ../shared/data)");
  app.add_option("--out", out, "folder for cost_cr.csv");
  app.add_flag("--quick", quick, "5 repetitions instead of 21");
  app.add_flag("--cpu", cpu, "also time cpu.cr on this machine's CPU (the ratio)");
  app.add_option("--cpu-threads", b.cpu_threads, "threads of cpu.cr (0 = all cores)");
  app.add_option("--schemes", schemes, "only these cuda.cr schemes (e.g. to profile one with ncu)");
  CLI11_PARSE(app, argc, argv);
  b.repetitions = quick ? 5 : 21;
  fs::create_directories(out);
  b.csv.open(fs::path(out) / "cost_cr.csv");
  b.csv << "experiment,cost,scheme,level_mm,grid,bins,k,blocks,us_per_eval\n";

  const Component& rc = b.host.require(RP_KIND_RESAMPLER, "resample.cpu");
  ResamplerInstance resampler(rc, b.services, resolve_params(rc, {}));
  const Image t1 = read_image(fs::path(data) / "chris_t1.nii.gz");
  b.levels = bench::li_kumar_levels(t1, resampler);
  b.matrices = bench::small_random_matrices(b.levels.back().image, 256);
  const size_t finest = b.levels.size() - 1;

  std::printf("device: %s\n", bench::device_name().c_str());
  std::printf("volume: chris_t1 self-pair on Li & Kumar's grids; median of %d calls after a warm-up\n",
              b.repetitions);
  bool gpu = true;
  try {
    b.make("cuda.cr", {});
  } catch (const ComponentError& e) {
    gpu = false;
    std::printf("cuda.cr unavailable, GPU tables skipped: %s\n", e.what());
  }

  std::vector<std::string> level_columns;
  for (const auto& l : b.levels) {
    const size_t big_k = l.image.voxel_count() < 2000000 ? 256 : 64;
    level_columns.push_back(l.name + " k=1");
    level_columns.push_back(l.name + " k=" + std::to_string(big_k));
  }
  std::printf("\n## Microseconds per evaluation by level (bins 256)\n\n");
  bench::print_header("cost", level_columns);
  std::map<size_t, double> cpu_us;  // level -> cpu.cr k=1
  if (cpu) {
    std::printf("| cpu.cr (%s threads)", b.cpu_threads > 0 ? std::to_string(b.cpu_threads).c_str() : "all");
    for (size_t l = 0; l < b.levels.size(); ++l) {
      cpu_us[l] = b.run("levels", "", l, 256, 1);
      std::printf(" | %.1f | -", cpu_us[l]);
    }
    std::printf(" |\n");
    std::fflush(stdout);
  }
  std::map<std::string, double> finest_k1;                        // scheme -> finest level, k=1
  std::map<std::string, std::pair<double, double>> coarsest_us;  // scheme -> coarsest level, (k=1, batched)
  if (gpu)
    for (const auto& s : schemes) {
      std::printf("| %s", s.c_str());
      for (size_t l = 0; l < b.levels.size(); ++l) {
        const size_t big_k = b.levels[l].image.voxel_count() < 2000000 ? 256 : 64;
        const double one = b.run("levels", s, l, 256, 1), batched = b.run("levels", s, l, 256, big_k);
        if (l == finest) finest_k1[s] = one;
        if (l == 0) coarsest_us[s] = {one, batched};
        std::printf(" | %.1f | %.1f", one, batched);
      }
      std::printf(" |\n");
      std::fflush(stdout);
    }
  if (gpu) {
    std::printf("\n## Per-call cost (%s, bins 256)\n\n", b.levels[0].name.c_str());
    std::printf("| scheme | one call, k=1 (us) | per evaluation, k=256 (us) | fixed cost of a call (us) |\n");
    std::printf("|---|---|---|---|\n");
    for (const auto& s : schemes)
      std::printf("| %s | %.1f | %.1f | %.1f |\n", s.c_str(), coarsest_us[s].first, coarsest_us[s].second,
                  coarsest_us[s].first - coarsest_us[s].second);
    std::fflush(stdout);
  }
  if (cpu && gpu) {
    std::printf("\n## cpu.cr / cuda.cr at %s, k=1\n\n| scheme | speed-up |\n|---|---|\n", b.levels[finest].name.c_str());
    for (const auto& s : schemes) std::printf("| %s | %.0fx |\n", s.c_str(), cpu_us[finest] / finest_k1[s]);
  }
  if (!gpu) return 0;

  // What a call's batch buys: the per-call cost spread over k, and (fused) the moving image
  // read from L2 by the k transforms of a span range rather than from memory by each.
  std::printf("\n## Versus batch size (%s, bins 256, us per evaluation)\n\n", b.levels[finest].name.c_str());
  const std::vector<size_t> batch_sizes = {1, 2, 4, 8, 16, 32, 64};
  std::vector<std::string> k_columns;
  for (size_t k : batch_sizes) k_columns.push_back("k=" + std::to_string(k));
  bench::print_header("scheme", k_columns);
  for (const auto& s : schemes) {
    std::printf("| %s", s.c_str());
    for (size_t k : batch_sizes) std::printf(" | %.1f", b.run("batch", s, finest, 256, k));
    std::printf(" |\n");
    std::fflush(stdout);
  }

  std::printf("\n## Versus bins (%s, k=1)\n\n", b.levels[finest].name.c_str());
  const std::vector<int> bins = {8, 16, 32, 64, 128, 256};
  std::vector<std::string> bin_columns;
  for (int n : bins) bin_columns.push_back(std::to_string(n));
  bench::print_header("scheme", bin_columns);
  for (const auto& s : schemes) {
    std::printf("| %s", s.c_str());
    for (int n : bins) std::printf(" | %.1f", b.run("bins", s, finest, n, 1));
    std::printf(" |\n");
    std::fflush(stdout);
  }

  // scheme5's grid is its chunk list (one block per chunk), so it has no block count to vary.
  std::printf("\n## Versus thread blocks (%s, bins 256, k=1)\n\n", b.levels[finest].name.c_str());
  const std::vector<int> blocks = {64, 128, 256, 512, 1024, 2048};
  std::vector<std::string> block_columns;
  for (int n : blocks) block_columns.push_back(std::to_string(n));
  bench::print_header("scheme", block_columns);
  for (const auto& s : schemes) {
    if (s == "scheme5") continue;
    std::printf("| %s", s.c_str());
    for (int n : blocks) std::printf(" | %.1f", b.run("blocks", s, finest, 256, 1, n));
    std::printf(" |\n");
    std::fflush(stdout);
  }

  // FLIRT's 8 and 4 mm searches are batches of about 20-64 transforms on a small level, where
  // a span per warp leaves each block a few hundred samples beside its histogram's clearing and
  // merge: fused's blocks per transform there (0 = its own choice).
  const std::vector<int> coarse_blocks = {0, 4, 8, 16, 32, 64, 128, 256, 512};
  std::vector<std::string> coarse_columns;
  for (int n : coarse_blocks) coarse_columns.push_back(n == 0 ? "auto" : std::to_string(n));
  std::printf("\n## fused versus thread blocks per transform at the coarse levels (bins 256, us per evaluation)\n\n");
  bench::print_header("level, k", coarse_columns);
  for (size_t l = 0; l + 1 < b.levels.size(); ++l)
    for (const size_t k : {1, 4, 32}) {
      std::printf("| %s, %zu", b.levels[l].name.c_str(), k);
      for (int n : coarse_blocks) std::printf(" | %.2f", b.run("coarse_blocks", "fused", l, 256, k, n));
      std::printf(" |\n");
      std::fflush(stdout);
    }
  return 0;
}
