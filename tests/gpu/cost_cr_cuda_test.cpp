// cuda.cr against the CPU reference cpu.cr on real images: every scheme, bins 64/128/256,
// levels 8/4/2/1 mm, 100 random transforms each (label gpu: skipped without a CUDA device,
// except the no-device error path, which is checked wherever the plugin is built).
#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform.hpp>

#include "support/test_support.hpp"

#include <cmath>
#include <map>
#include <random>

using namespace regpipe;

namespace {

PluginSearchOptions built_plugins() {
  PluginSearchOptions o;
  o.plugin_paths = {test::plugin_dir()};
  o.use_environment = false;
  o.use_default_dirs = false;
  return o;
}

// Shared across tests: plugins, the image levels and the CPU reference costs, computed once.
struct Fixture {
  PluginHost host{built_plugins()};
  HostServices services;
  std::map<double, std::pair<Image, Image>> levels;        // mm -> (reference, moving)
  std::map<double, std::vector<double>> matrices;          // mm -> 100 x 16
  std::map<std::pair<int, double>, std::vector<double>> cpu_costs, cpu_overlaps;  // (bins, mm)
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

constexpr int kTransforms = 100;
const double kLevels[] = {8, 4, 2, 1};
const int kBins[] = {64, 128, 256};

std::unique_ptr<CostInstance> make_cost(const std::string& id, const std::map<std::string, std::string>& params) {
  const Component& c = fixture().host.require(RP_KIND_COST, id);
  return std::make_unique<CostInstance>(c, fixture().services, resolve_params(c, params));
}

// Random transforms around the pair's scanner alignment: rotations up to 15 degrees, shifts
// up to 15 mm, scales 0.9..1.1, about the reference centre.
std::vector<double> random_matrices(const Image& reference, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::Vector3d centre = centre_of_mass(reference);
  std::vector<double> out;
  for (int i = 0; i < kTransforms; ++i) {
    AffineParams p = identity_params();
    for (int a = 0; a < 3; ++a) {
      p[a] = u(rng) * 15.0 * M_PI / 180.0;
      p[3 + a] = u(rng) * 15.0;
      p[6 + a] = 1.0 + 0.1 * u(rng);
    }
    const Eigen::Matrix4d m = params_to_matrix(p, centre);
    for (int j = 0; j < 16; ++j) out.push_back(m(j / 4, j % 4));
  }
  return out;
}

// Loads the level images, transforms and CPU costs on first use (empty when data is missing).
bool prepare_level(double mm, int bins) {
  Fixture& f = fixture();
  if (f.levels.count(mm) == 0) {
    const auto t1 = test::shared_data("chris_t1.nii.gz"), pd = test::shared_data("chris_PD.nii.gz");
    if (t1.empty() || pd.empty()) return false;
    const Component& r = f.host.require(RP_KIND_RESAMPLER, "resample.cpu");
    ResamplerInstance resampler(r, f.services, resolve_params(r, {}));
    Image ref = make_level(read_image(t1), mm, resampler);
    Image mov = make_level(read_image(pd), mm, resampler);
    f.matrices[mm] = random_matrices(ref, 1234u + unsigned(mm));
    f.levels.emplace(mm, std::make_pair(std::move(ref), std::move(mov)));
  }
  const auto key = std::make_pair(bins, mm);
  if (f.cpu_costs.count(key) == 0) {
    auto cpu = make_cost("cpu.cr", {{"bins", std::to_string(bins)}});
    cpu->set_reference(f.levels.at(mm).first, nullptr);
    cpu->set_moving(f.levels.at(mm).second, nullptr);
    std::vector<double> costs(kTransforms), overlaps(kTransforms);
    cpu->evaluate(f.matrices.at(mm).data(), kTransforms, costs.data(), overlaps.data());
    f.cpu_costs[key] = costs;
    f.cpu_overlaps[key] = overlaps;
  }
  return true;
}

// The schemes that accumulate without floating-point atomics repeat bit for bit.
bool deterministic(const std::string& scheme) { return scheme == "scheme2" || scheme == "scheme5"; }

class CudaCr : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (fixture().host.find(RP_KIND_COST, "cuda.cr") == nullptr) GTEST_SKIP() << "cuda.cr is not built (no nvcc)";
    try {
      make_cost("cuda.cr", {});
    } catch (const ComponentError& e) {
      if (e.status() == RP_DEVICE) GTEST_SKIP() << "no CUDA device: " << e.what();
      throw;
    }
  }
};

}  // namespace

// Float accumulation of ~10^5..10^7 samples in shared memory (and float y, w per sample,
// where cpu.cr uses double) moves the cost by a few 1e-6 relative; the bound leaves margin.
constexpr double kRelativeTolerance = 1e-4;

TEST_P(CudaCr, AgreesWithTheCpuReferenceOnRealImages) {
  const std::string scheme = GetParam();
  for (double mm : kLevels)
    for (int bins : kBins) {
      if (!prepare_level(mm, bins)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
      Fixture& f = fixture();
      auto gpu = make_cost("cuda.cr", {{"scheme", scheme}, {"bins", std::to_string(bins)}});
      gpu->set_reference(f.levels.at(mm).first, nullptr);
      gpu->set_moving(f.levels.at(mm).second, nullptr);
      std::vector<double> costs(kTransforms), overlaps(kTransforms);
      gpu->evaluate(f.matrices.at(mm).data(), kTransforms, costs.data(), overlaps.data());
      const auto& cpu = f.cpu_costs.at({bins, mm});
      const auto& cpu_overlap = f.cpu_overlaps.at({bins, mm});
      double worst = 0.0;
      for (int t = 0; t < kTransforms; ++t) {
        const double rel = std::fabs(costs[t] - cpu[t]) / std::max(cpu[t], 1e-3);
        worst = std::max(worst, rel);
        EXPECT_LE(rel, kRelativeTolerance) << scheme << " bins " << bins << " at " << mm << " mm, transform " << t
                                           << ": gpu " << costs[t] << " cpu " << cpu[t];
        EXPECT_NEAR(overlaps[t], cpu_overlap[t], 1e-6) << scheme << " transform " << t;
      }
      std::printf("%-9s bins %3d %g mm: max relative difference to cpu.cr %.2e\n", scheme.c_str(), bins, mm, worst);
      // Batched equals one at a time (bitwise for the deterministic schemes).
      std::vector<double> single(3);
      for (int t = 0; t < 3; ++t) gpu->evaluate(f.matrices.at(mm).data() + 16 * t, 1, &single[t]);
      for (int t = 0; t < 3; ++t) {
        if (deterministic(scheme)) EXPECT_EQ(single[t], costs[t]);
        else EXPECT_NEAR(single[t], costs[t], kRelativeTolerance * std::max(costs[t], 1e-3));
      }
      if (deterministic(scheme)) {
        std::vector<double> again(kTransforms);
        gpu->evaluate(f.matrices.at(mm).data(), kTransforms, again.data());
        EXPECT_EQ(again, costs) << scheme << " is documented as bitwise repeatable";
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Schemes, CudaCr,
                         ::testing::Values("fused", "scheme1", "scheme2", "scheme3a", "scheme3b", "scheme4", "scheme5"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Runs everywhere the plugin is built: without a device the error names the CPU
// alternative; with one, an out-of-range device index is refused the same way.
TEST(CudaCrDevice, MissingDeviceIsAClearErrorNamingTheCpuAlternative) {
  const Component* c = fixture().host.find(RP_KIND_COST, "cuda.cr");
  if (c == nullptr) GTEST_SKIP() << "cuda.cr is not built (no nvcc)";
  try {
    CostInstance cost(*c, fixture().services, resolve_params(*c, {{"device", "63"}}));
    FAIL() << "device 63 should not exist";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_DEVICE);
    EXPECT_NE(std::string(e.what()).find("cpu.cr"), std::string::npos) << e.what();
    std::printf("%s\n", e.what());
  }
}
