// Microseconds per mutual-information evaluation for every cuda.mi scheme versus the joint
// histogram's size (bins 16..256 per image, 16^2..256^2 joint bins), on the 1 mm grid
// (256x256x160) of two data sets: chris_t1 resampled as in regpipe_bench_cr, registered to
// itself under small random transforms (a brain: most samples in the background pair), and
// uniform random intensities on the same grid (every joint bin equally likely: no hot bin).
// With --cpu, cpu.mi on the same cases for the ratio. Markdown tables on stdout, every number
// in <out>/cost_mi.csv.
//
//   regpipe_bench_mi [--data DIR] [--out DIR] [--quick] [--cpu [--cpu-threads N]] [--schemes S ...] [--k K]
//
// Time: as regpipe_bench_cr, the median over repetitions of one batched evaluate call divided
// by k, after a warm-up call (which is also where adaptive learns its configuration). A
// scheme that cannot hold a bin count even with 32 threads a block prints "-"; the CSV names
// the threads a block each measurement used (0 for cpu.mi). approximate counts about one
// sample in threads_per_block: its time is not that of an exact histogram. "privatised+pv" is
// privatised with partial_volume (8 weighted parts a sample; at most 241 bins on an H100, so
// its 256^2 column is "-").
#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>

#include "bench_support.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>

using namespace regpipe;
namespace fs = std::filesystem;

namespace {

// Uniform random intensities in [0, 1000) on the grid of `like`.
Image uniform_random_like(const Image& like) {
  Image out = like;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.f, 1000.f);
  for (float& v : out.data) v = u(rng);
  return out;
}

struct Bench {
  PluginHost host{PluginSearchOptions{}};
  HostServices services;
  int repetitions = 21;
  int cpu_threads = 0;
  std::vector<double> matrices;
  std::ofstream csv;

  // One measurement, also written to the CSV; nothing when the cost refuses the parameters.
  // A scheme whose per-thread or per-warp histograms do not fit with 256 threads a block is
  // measured with the most threads (128, 64, 32) with which they do.
  std::optional<double> run(const std::string& data, const Image& image, const std::string& scheme, int bins,
                            size_t k) {
    std::map<std::string, std::string> params{{"bins", std::to_string(bins)}};
    // "<scheme>+pv": the scheme with partial_volume (Maes et al.: 8 weighted parts a sample)
    const bool pv = scheme.size() > 3 && scheme.compare(scheme.size() - 3, 3, "+pv") == 0;
    if (pv) params["partial_volume"] = "true";
    if (scheme.empty()) params["threads"] = std::to_string(cpu_threads);
    else params["scheme"] = pv ? scheme.substr(0, scheme.size() - 3) : scheme;
    const std::string id = scheme.empty() ? "cpu.mi" : "cuda.mi";
    std::unique_ptr<CostInstance> cost;
    int threads = 0;
    for (const int tried : scheme.empty() ? std::vector<int>{0} : std::vector<int>{256, 128, 64, 32}) {
      if (tried > 0) params["threads_per_block"] = std::to_string(tried);
      try {
        const Component& c = host.require(RP_KIND_COST, id);
        cost = std::make_unique<CostInstance>(c, services, resolve_params(c, params));
        threads = tried;
        break;
      } catch (const ComponentError& e) {
        if (e.status() == RP_DEVICE) throw;  // e.g. more bins than the scheme's shared memory holds: try fewer threads
      }
    }
    if (!cost) return std::nullopt;
    cost->set_reference(image, nullptr);
    cost->set_moving(image, nullptr);
    const double us = bench::us_per_eval(*cost, matrices, k, repetitions);
    csv << data << "," << id << "," << scheme << "," << bins << "," << k << "," << us << "," << threads << "\n";
    return us;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"regpipe mutual-information cost benchmark (cuda.mi schemes versus bins)"};
  const char* env_data = std::getenv("REGPIPE_TEST_DATA");
  std::string data = env_data != nullptr ? env_data : "../shared/data", out = ".";
  bool quick = false, cpu = false;
  size_t k = 64;
  Bench b;
  std::vector<std::string> schemes = {"per_warp",    "per_thread_packed", "privatised", "privatised+pv",
                                      "sort_and_count", "presorted",      "approximate", "adaptive"};
  app.add_option("--data", data, "folder with chris_t1.nii.gz (default $REGPIPE_TEST_DATA or ../shared/data)");
  app.add_option("--out", out, "folder for cost_mi.csv");
  app.add_flag("--quick", quick, "5 repetitions instead of 21");
  app.add_flag("--cpu", cpu, "also time cpu.mi on this machine's CPU (the ratio)");
  app.add_option("--cpu-threads", b.cpu_threads, "threads of cpu.mi (0 = all cores)");
  app.add_option("--schemes", schemes,
                 "only these cuda.mi schemes (e.g. to profile one with ncu); <scheme>+pv: with partial_volume");
  app.add_option("--k", k, "transforms per batched call (default 64)");
  CLI11_PARSE(app, argc, argv);
  b.repetitions = quick ? 5 : 21;
  fs::create_directories(out);
  b.csv.open(fs::path(out) / "cost_mi.csv");
  b.csv << "data,cost,scheme,bins,k,us_per_eval,threads_per_block\n";

  const Component& rc = b.host.require(RP_KIND_RESAMPLER, "resample.cpu");
  ResamplerInstance resampler(rc, b.services, resolve_params(rc, {}));
  const Image brain = bench::resample_onto(read_image(fs::path(data) / "chris_t1.nii.gz"), {256, 256, 160}, resampler);
  const Image uniform = uniform_random_like(brain);
  b.matrices = bench::small_random_matrices(brain, k);

  std::printf("device: %s\n", bench::device_name().c_str());
  std::printf("grid 256x256x160; median of %d calls after a warm-up\n", b.repetitions);
  const std::vector<int> bins = {16, 32, 64, 128, 256};
  std::vector<std::string> columns;
  for (int n : bins) columns.push_back(std::to_string(n) + "^2");
  for (const auto& [name, image] : {std::pair<std::string, const Image*>{"brain", &brain}, {"uniform", &uniform}}) {
    for (const size_t batch : {size_t(1), k}) {
      std::printf("\n## Microseconds per evaluation, %s, k=%zu, versus joint bins\n\n", name.c_str(), batch);
      bench::print_header("cost", columns);
      std::vector<std::string> rows = schemes;
      if (cpu) rows.insert(rows.begin(), "");
      for (const auto& s : rows) {
        std::printf("| %s", s.empty() ? "cpu.mi" : s.c_str());
        for (int n : bins) {
          std::optional<double> us;
          try {
            us = b.run(name, *image, s, n, batch);
          } catch (const ComponentError& e) {
            std::printf(" |\n\ncuda.mi unavailable: %s\n", e.what());
            return 0;
          }
          if (us) std::printf(" | %.1f", *us);
          else std::printf(" | -");
        }
        std::printf(" |\n");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
