// regpipe compare with every cuda.cr scheme next to cpu.cr on the phantom (label gpu: skipped
// without cuda.cr or a CUDA device): each scheme agrees with cpu.cr within the plugin's stated
// tolerance on the same transforms, its profiles have their minima where cpu.cr's are, and a
// full registration with it recovers the known truth.
#include <regpipe/host/components.hpp>
#include <regpipe/host/compare.hpp>

#include "support/test_support.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;
using namespace regpipe;

namespace {

const std::vector<std::string> kSchemes = {"fused", "scheme1", "scheme2", "scheme3a", "scheme3b", "scheme4", "scheme5"};

// cuda.cr's README: equal to cpu.cr within 1e-5, 2e-4 for scheme3a/3b (float accumulation).
double tolerance(const std::string& scheme) { return scheme == "scheme3a" || scheme == "scheme3b" ? 2e-4 : 1e-5; }

std::vector<std::vector<std::string>> read_csv(const fs::path& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    rows.push_back(cells);
  }
  return rows;
}

size_t column(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << "no column " << name;
  return size_t(it - header.begin());
}

}  // namespace

TEST(CompareCuda, EverySchemeAgreesWithCpuCrAndFindsTheSameMinima) {
  PluginHost host(test::built_plugins());
  if (const auto why = test::gpu_component_unavailable(host, RP_KIND_COST, "cuda.cr")) GTEST_SKIP() << *why;

  test::TempDir dir;
  std::string out;
  ASSERT_EQ(test::run_command(test::regpipe_cli().string() + " phantom '" + (dir / "demo").string() +
                                  "' --size 40 --voxel-mm 4",
                              &out),
            0)
      << out;
  std::ofstream yaml(dir / "compare.yaml");
  yaml << "pipeline: demo/pipeline.yaml\ncosts:\n  - plugin: cpu.cr\n    params: {bins: 64}\n";
  for (const auto& s : kSchemes)
    yaml << "  - {plugin: cuda.cr, label: cuda.cr " << s << ", params: {bins: 64, scheme: " << s << "}}\n";
  yaml << "centre: truth\nlevel_mm: 4\nprofiles: {points: 11}\nagreement: {transforms: 50}\n"
          "timing: {repeats: 3, batch: 64}\nregister: true\noutputs: {dir: out}\n";
  yaml.close();
  ASSERT_EQ(test::run_command(test::regpipe_cli().string() + " compare '" + (dir / "compare.yaml").string() +
                                  "' -q --plugin-path '" + test::plugin_dir().string() + "'",
                              &out),
            0)
      << out;

  // Agreement: every cuda.cr row names cpu.cr and stays within the scheme's tolerance.
  const auto agreement = read_csv(dir / "out" / "agreement.csv");
  ASSERT_GT(agreement.size(), 1u);
  const size_t cost = column(agreement[0], "cost"), ref = column(agreement[0], "cpu_reference"),
               diff = column(agreement[0], "relative_difference");
  std::map<std::string, double> worst;
  for (size_t r = 1; r < agreement.size(); ++r) {
    const auto& row = agreement[r];
    if (row[cost] == "cpu.cr") continue;
    EXPECT_EQ(row[ref], "cpu.cr") << row[cost];
    worst[row[cost]] = std::max(worst[row[cost]], std::stod(row[diff]));
  }
  for (const auto& s : kSchemes) {
    const std::string label = "cuda.cr " + s;
    ASSERT_EQ(worst.count(label), 1u) << label << " has no agreement rows";
    std::printf("%-18s worst relative difference from cpu.cr %.2e\n", label.c_str(), worst[label]);
    EXPECT_LE(worst[label], tolerance(s)) << label;
  }

  // Profiles: each scheme's minimum along each parameter is at cpu.cr's.
  const auto profiles = read_csv(dir / "out" / "profiles.csv");
  const size_t cpu_col = column(profiles[0], "cpu.cr");
  for (const auto& s : kSchemes) {
    const size_t col = column(profiles[0], "cuda.cr " + s);
    for (const auto& param : compare_parameter_names()) {
      double cpu_best = INFINITY, cuda_best = INFINITY;
      std::string cpu_at, cuda_at;
      for (size_t r = 1; r < profiles.size(); ++r) {
        if (profiles[r][0] != param) continue;
        if (std::stod(profiles[r][cpu_col]) < cpu_best) cpu_best = std::stod(profiles[r][cpu_col]), cpu_at = profiles[r][1];
        if (std::stod(profiles[r][col]) < cuda_best) cuda_best = std::stod(profiles[r][col]), cuda_at = profiles[r][1];
      }
      EXPECT_EQ(cuda_at, cpu_at) << "cuda.cr " << s << " along " << param;
    }
  }

  // Registrations: every scheme recovers the truth like cpu.cr.
  const auto registrations = read_csv(dir / "out" / "registrations.csv");
  ASSERT_EQ(registrations.size(), 1 + 1 + kSchemes.size());
  const size_t displacement = column(registrations[0], "mean_displacement_mm");
  for (size_t r = 1; r < registrations.size(); ++r)
    EXPECT_LT(std::stod(registrations[r][displacement]), 0.5) << registrations[r][0];
  std::printf("%s\n", out.c_str());
}
