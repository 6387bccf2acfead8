// Microseconds per correlation-ratio evaluation for every cuda.cr scheme (and cpu.cr), the
// experiments of Li & Kumar 2014 section IV on today's hardware: per level (8/4/2/1 mm), per
// batch size, versus bins and versus thread-block count. Prints Markdown tables and writes CSV.
//
//   regpipe_bench_cr --data DIR --out DIR [--quick] [--cpu-only]
#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

using namespace regpipe;
namespace fs = std::filesystem;

namespace {

struct Bench {
  PluginHost host;
  HostServices services;
  int repetitions;
  std::ofstream csv;

  explicit Bench(const PluginSearchOptions& o, int reps, const fs::path& csv_path)
      : host(o), repetitions(reps), csv(csv_path) {
    csv << "experiment,cost,scheme,level_mm,bins,k,blocks,us_per_eval\n";
  }

  std::unique_ptr<CostInstance> make(const std::string& id, const std::map<std::string, std::string>& params) {
    const Component& c = host.require(RP_KIND_COST, id);
    return std::make_unique<CostInstance>(c, services, resolve_params(c, params));
  }

  // Median over repetitions of (wall time of one batched evaluate call) / k, after a warm-up.
  double us_per_eval(CostInstance& cost, const std::vector<double>& matrices, size_t k) {
    std::vector<double> costs(k);
    cost.evaluate(matrices.data(), k, costs.data());
    std::vector<double> samples;
    for (int r = 0; r < repetitions; ++r) {
      const auto start = std::chrono::steady_clock::now();
      cost.evaluate(matrices.data(), k, costs.data());
      samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
                        double(k));
    }
    std::nth_element(samples.begin(), samples.begin() + long(samples.size() / 2), samples.end());
    return samples[samples.size() / 2];
  }
};

std::vector<double> random_matrices(const Image& reference, size_t k) {
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

const std::vector<std::string> kSchemes = {"scheme1", "scheme2", "scheme3a", "scheme3b", "scheme4", "scheme5", "fused"};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"regpipe CR cost benchmark"};
  std::string data = "../shared/data", out = ".";
  bool quick = false, cpu_only = false;
  int cpu_threads = 0;
  app.add_option("--data", data, "folder with chris_t1.nii.gz");
  app.add_option("--out", out, "folder for the CSV");
  app.add_flag("--quick", quick, "fewer repetitions");
  app.add_flag("--cpu-only", cpu_only, "only cpu.cr (for the CPU machine)");
  app.add_option("--cpu-threads", cpu_threads, "threads of cpu.cr (0 = all cores)");
  CLI11_PARSE(app, argc, argv);

  PluginSearchOptions o;
  Bench b(o, quick ? 5 : 21, fs::path(out) / (cpu_only ? "cost_cr_cpu.csv" : "cost_cr_gpu.csv"));
  const Component& rc = b.host.require(RP_KIND_RESAMPLER, "resample.cpu");
  ResamplerInstance resampler(rc, b.services, resolve_params(rc, {}));
  // The self-pair of chris_t1 (188x256x190 at 0.88 mm: the papers' scale) on FLIRT's levels.
  const Image t1 = read_image(fs::path(data) / "chris_t1.nii.gz");
  std::map<double, Image> levels;
  for (double mm : {8.0, 4.0, 2.0, 1.0}) levels[mm] = make_level(t1, mm, resampler);
  const std::vector<double> matrices = random_matrices(levels.at(1.0), 256);

  auto run = [&](const std::string& experiment, const std::string& id, const std::string& scheme, double mm, int bins,
                 size_t k, int blocks) {
    std::map<std::string, std::string> params{{"bins", std::to_string(bins)}};
    if (id == "cuda.cr") {
      params["scheme"] = scheme;
      params["blocks"] = std::to_string(blocks);
    } else {
      params["threads"] = std::to_string(cpu_threads);
    }
    auto cost = b.make(id, params);
    cost->set_reference(levels.at(mm), nullptr);
    cost->set_moving(levels.at(mm), nullptr);
    const double us = b.us_per_eval(*cost, matrices, k);
    b.csv << experiment << "," << id << "," << scheme << "," << mm << "," << bins << "," << k << "," << blocks << ","
          << us << "\n";
    return us;
  };

  const auto& ref1 = levels.at(1.0);
  std::printf("reference: chris_t1 self-pair; 1 mm level %ux%ux%u voxels\n", ref1.dims[0], ref1.dims[1], ref1.dims[2]);
  if (cpu_only) {
    std::printf("\n| cost | level | us/eval (k=1) |\n|---|---|---|\n");
    for (double mm : {8.0, 4.0, 2.0, 1.0})
      std::printf("| cpu.cr | %g mm | %.1f |\n", mm, run("levels", "cpu.cr", "", mm, 256, 1, 0));
    return 0;
  }

  std::printf("\n## Microseconds per evaluation by level (bins 256; median of %d calls)\n\n", b.repetitions);
  std::printf("| scheme | 8 mm k=1 | 8 mm k=256 | 4 mm k=1 | 4 mm k=256 | 2 mm k=1 | 2 mm k=64 | 1 mm k=1 | 1 mm k=64 |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& s : kSchemes) {
    std::printf("| %s", s.c_str());
    for (double mm : {8.0, 4.0, 2.0, 1.0})
      for (size_t k : {size_t(1), size_t(mm >= 4 ? 256 : 64)}) std::printf(" | %.1f", run("levels", "cuda.cr", s, mm, 256, k, 0));
    std::printf(" |\n");
    std::fflush(stdout);
  }

  std::printf("\n## Versus bins (1 mm, k=1)\n\n| scheme |");
  const std::vector<int> bins = {8, 16, 32, 64, 128, 256};
  for (int n : bins) std::printf(" %d |", n);
  std::printf("\n|---|");
  for (size_t i = 0; i < bins.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const auto& s : kSchemes) {
    std::printf("| %s", s.c_str());
    for (int n : bins) std::printf(" | %.1f", run("bins", "cuda.cr", s, 1.0, n, 1, 0));
    std::printf(" |\n");
    std::fflush(stdout);
  }

  std::printf("\n## Versus thread blocks (1 mm, bins 256, k=1)\n\n| scheme |");
  const std::vector<int> blocks = {64, 128, 256, 512, 1024, 2048};
  for (int n : blocks) std::printf(" %d |", n);
  std::printf("\n|---|");
  for (size_t i = 0; i < blocks.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const auto& s : {"scheme1", "scheme2", "scheme3a", "scheme3b", "scheme4", "fused"}) {
    std::printf("| %s", s);
    for (int n : blocks) std::printf(" | %.1f", run("blocks", "cuda.cr", s, 1.0, 256, 1, n));
    std::printf(" |\n");
    std::fflush(stdout);
  }
  return 0;
}
