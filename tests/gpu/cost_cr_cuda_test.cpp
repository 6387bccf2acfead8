// cuda.cr against the CPU reference cpu.cr on real images: every scheme, bins 64/128/256,
// levels 8/4/2/1 mm, 100 random transforms each (label gpu: skipped without a CUDA device,
// except the no-device error path, which is checked wherever the plugin is built).
#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform.hpp>

#include "support/random_transforms.hpp"
#include "support/test_support.hpp"

#include <algorithm>
#include <cmath>
#include <map>

using namespace regpipe;

namespace {

// Shared across tests: plugins, the image levels and the CPU reference costs, computed once.
struct Fixture {
  PluginHost host{test::built_plugins()};
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
    f.matrices[mm] = test::random_affine_matrices(ref, 1234u + unsigned(mm), kTransforms);
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

// cuda.cr with `params` on the unweighted pair of level `mm` (prepare_level first).
std::unique_ptr<CostInstance> gpu_cost_on_level(const std::map<std::string, std::string>& params, double mm) {
  auto gpu = make_cost("cuda.cr", params);
  gpu->set_reference(fixture().levels.at(mm).first, nullptr);
  gpu->set_moving(fixture().levels.at(mm).second, nullptr);
  return gpu;
}

// The schemes that accumulate without floating-point atomics repeat bit for bit (fused: fixed
// summation orders and integer atomics; its partition does not depend on k).
bool deterministic(const std::string& scheme) {
  return scheme == "scheme2" || scheme == "scheme5" || scheme == "fused";
}

// Why the GPU tests cannot run here ("" when they can).
std::string gpu_unavailable() {
  return test::gpu_component_unavailable(fixture().host, RP_KIND_COST, "cuda.cr").value_or("");
}

class CudaCr : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
};

class CudaCrFused : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
};

// A transform that moves the reference 10 m away: no voxel maps inside the moving image.
std::vector<double> far_away_matrix() {
  std::vector<double> m = {1, 0, 0, 1e4, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  return m;
}

}  // namespace

// Relative tolerance on the cost against cpu.cr (double throughout), set by float
// accumulation. Worst measured on an H100 over these 1200 cases: scheme3a/3b 5.2e-5 (a float
// histogram per block, ~10^4 samples a bin; each add loses up to 6e-8 relative), scheme4
// 1.7e-6 (a float histogram per warp), the schemes that merge in double 5e-7 or less; fused
// rounds each sample's float products to 64-bit fixed point (2^-61 of the largest total) and
// sums them exactly, the background bin a lane's few dozen samples in float first (measured
// 1.2e-7 before the integer histograms). The bounds leave 4x (3a/3b) and 6x or more (the rest).
double tolerance(const std::string& scheme) { return scheme == "scheme3a" || scheme == "scheme3b" ? 2e-4 : 1e-5; }

// cpu.cr and cuda.cr `scheme`, both with `params`, on level `mm`'s images and the given weights
// (null: none): the first `count` transforms' costs and overlaps agree within the scheme's
// tolerance. Prints the worst relative difference under `what`; returns cpu.cr's costs.
std::vector<double> expect_gpu_matches_cpu(const std::string& scheme, const std::map<std::string, std::string>& params,
                                           double mm, const Image* ref_weight, const Image* mov_weight,
                                           const std::string& what, int count = 20) {
  const auto& [ref, mov] = fixture().levels.at(mm);
  auto cpu = make_cost("cpu.cr", params);
  auto gpu_params = params;
  gpu_params["scheme"] = scheme;
  auto gpu = make_cost("cuda.cr", gpu_params);
  for (CostInstance* c : {cpu.get(), gpu.get()}) {
    c->set_reference(ref, ref_weight);
    c->set_moving(mov, mov_weight);
  }
  const double* matrices = fixture().matrices.at(mm).data();
  std::vector<double> expected(count), expected_overlap(count), costs(count), overlaps(count);
  cpu->evaluate(matrices, count, expected.data(), expected_overlap.data());
  gpu->evaluate(matrices, count, costs.data(), overlaps.data());
  double worst = 0.0;
  for (int t = 0; t < count; ++t) {
    const double rel = std::fabs(costs[t] - expected[t]) / std::max(expected[t], 1e-3);
    worst = std::max(worst, rel);
    EXPECT_LE(rel, tolerance(scheme)) << scheme << " " << what << " transform " << t << ": gpu " << costs[t]
                                      << " cpu " << expected[t];
    EXPECT_NEAR(overlaps[t], expected_overlap[t], 1e-5) << scheme << " " << what << " transform " << t;
  }
  std::printf("%-9s %s: max relative difference to cpu.cr %.2e\n", scheme.c_str(), what.c_str(), worst);
  return expected;
}

TEST_P(CudaCr, AgreesWithTheCpuReferenceOnRealImages) {
  const std::string scheme = GetParam();
  const double tol = tolerance(scheme);
  for (double mm : kLevels)
    for (int bins : kBins) {
      if (!prepare_level(mm, bins)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
      Fixture& f = fixture();
      auto gpu = gpu_cost_on_level({{"scheme", scheme}, {"bins", std::to_string(bins)}}, mm);
      std::vector<double> costs(kTransforms), overlaps(kTransforms);
      gpu->evaluate(f.matrices.at(mm).data(), kTransforms, costs.data(), overlaps.data());
      const auto& cpu = f.cpu_costs.at({bins, mm});
      const auto& cpu_overlap = f.cpu_overlaps.at({bins, mm});
      double worst = 0.0;
      for (int t = 0; t < kTransforms; ++t) {
        const double rel = std::fabs(costs[t] - cpu[t]) / std::max(cpu[t], 1e-3);
        worst = std::max(worst, rel);
        EXPECT_LE(rel, tol) << scheme << " bins " << bins << " at " << mm << " mm, transform " << t << ": gpu "
                            << costs[t] << " cpu " << cpu[t];
        EXPECT_NEAR(overlaps[t], cpu_overlap[t], 1e-6) << scheme << " transform " << t;
      }
      std::printf("%-9s bins %3d %g mm: max relative difference to cpu.cr %.2e\n", scheme.c_str(), bins, mm, worst);
      // Batched equals one at a time (bitwise for the deterministic schemes).
      std::vector<double> single(3);
      for (int t = 0; t < 3; ++t) gpu->evaluate(f.matrices.at(mm).data() + 16 * t, 1, &single[t]);
      for (int t = 0; t < 3; ++t) {
        if (deterministic(scheme)) EXPECT_EQ(single[t], costs[t]);
        else EXPECT_NEAR(single[t], costs[t], tol * std::max(costs[t], 1e-3));
      }
      if (deterministic(scheme)) {
        std::vector<double> again(kTransforms);
        gpu->evaluate(f.matrices.at(mm).data(), kTransforms, again.data());
        EXPECT_EQ(again, costs) << scheme << " is documented as bitwise repeatable";
      }
    }
}

// Weightings with zeros (fused's spans then have gaps) and fractions, the fuzzy border and
// nearest-neighbour sampling: the paths the unweighted comparison above does not reach.
TEST_P(CudaCr, WeightsBorderAndNearestAgreeWithTheCpuReference) {
  const std::string scheme = GetParam();
  constexpr double kMm = 4;
  constexpr int kBinsHere = 64;
  if (!prepare_level(kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  const auto& [ref, mov] = fixture().levels.at(kMm);
  // Reference: 0 on the darkest voxels (mostly background), 0.5..1 rising with intensity.
  Image ref_weight = ref;
  const float ref_max = *std::max_element(ref.data.begin(), ref.data.end());
  for (float& v : ref_weight.data) v = v < 0.05f * ref_max ? 0.f : 0.5f + 0.5f * v / ref_max;
  // Moving: a ramp along x from 0.2 to 1.
  Image mov_weight = mov;
  for (uint32_t z = 0; z < mov.dims[2]; ++z)
    for (uint32_t y = 0; y < mov.dims[1]; ++y)
      for (uint32_t x = 0; x < mov.dims[0]; ++x)
        mov_weight.data[x + size_t(mov.dims[0]) * (y + size_t(mov.dims[1]) * z)] =
            0.2f + 0.8f * float(x) / float(std::max(1u, mov.dims[0] - 1));
  for (const std::string interpolation : {"trilinear", "nearest"})
    expect_gpu_matches_cpu(scheme,
                           {{"bins", std::to_string(kBinsHere)}, {"border_mm", "6"}, {"interpolation", interpolation}},
                           kMm, &ref_weight, &mov_weight, "weighted, border 6 mm, " + interpolation);
}

// head_weight_mm (head_weight.hpp): both images' smooth head masks, derived on the host by the
// code cpu.cr uses, times a given weight, give cpu.cr's costs within the scheme's tolerance.
TEST_P(CudaCr, HeadWeightAgreesWithTheCpuReference) {
  const std::string scheme = GetParam();
  constexpr double kMm = 2;
  constexpr int kBinsHere = 256;
  if (!prepare_level(kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  const Image& ref = fixture().levels.at(kMm).first;
  Image ref_weight = ref;  // a given weight too: 1 in the left half of the grid, 0.5 in the right
  for (size_t i = 0; i < ref.data.size(); ++i) ref_weight.data[i] = i % ref.dims[0] < ref.dims[0] / 2 ? 1.f : 0.5f;
  const std::vector<double> expected = expect_gpu_matches_cpu(
      scheme, {{"bins", std::to_string(kBinsHere)}, {"head_weight_mm", "2"}}, kMm, &ref_weight, nullptr, "head_weight_mm 2");
  // The weights change the measure: not FLIRT's CR's costs.
  EXPECT_GT(std::fabs(expected[0] - fixture().cpu_costs.at({kBinsHere, kMm})[0]), 1e-3);
}

// The finish step on the GPU (cost, overlap, zeroing for the next call) without any sample:
// the worst cost 1 and overlap 0, as cpu.cr, and the next evaluation is not disturbed.
TEST_P(CudaCr, NoOverlapCostsTheWorstValueAndLeavesTheNextCallClean) {
  const std::string scheme = GetParam();
  constexpr double kMm = 8;
  constexpr int kBinsHere = 64;
  if (!prepare_level(kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  Fixture& f = fixture();
  auto gpu = gpu_cost_on_level({{"scheme", scheme}, {"bins", std::to_string(kBinsHere)}}, kMm);
  // [inside, far away, inside]: the far transform sits between two that have samples.
  std::vector<double> matrices(f.matrices.at(kMm).begin(), f.matrices.at(kMm).begin() + 16);
  const std::vector<double> far = far_away_matrix();
  matrices.insert(matrices.end(), far.begin(), far.end());
  matrices.insert(matrices.end(), f.matrices.at(kMm).begin() + 16, f.matrices.at(kMm).begin() + 32);
  std::vector<double> costs(3), overlaps(3, -1.0);
  gpu->evaluate(matrices.data(), 3, costs.data(), overlaps.data());
  EXPECT_EQ(costs[1], 1.0) << scheme << ": a transform without overlap costs the worst value";
  EXPECT_EQ(overlaps[1], 0.0) << scheme << ": a transform without overlap has overlap 0";
  const auto& cpu = f.cpu_costs.at({kBinsHere, kMm});
  for (int i : {0, 2}) {
    const int t = i / 2;  // test transforms 0 and 1
    EXPECT_LE(std::fabs(costs[i] - cpu[t]) / std::max(cpu[t], 1e-3), tolerance(scheme))
        << scheme << " transform " << t << " next to one without overlap: gpu " << costs[i] << " cpu " << cpu[t];
  }
  // Alone after it: the sums the far transform left (none) and the inside ones were cleared.
  std::vector<double> again(1);
  gpu->evaluate(matrices.data(), 1, again.data());
  EXPECT_NEAR(again[0], costs[0], tolerance(scheme) * std::max(costs[0], 1e-3))
      << scheme << ": a call's sums leaked into the next call (not zeroed by the finish step)";
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

// fused finishes each transform in the last of its blocks (a ticket counter per transform,
// reset for the next call). A batch of 70 000 (the 100 test transforms repeated, every 7th
// replaced by one without overlap; more than a grid dimension of 65535) must give every
// transform the bits it gets in a batch of 100, in both kernels (plain, and weighted with a
// border), after a smaller call and before a smaller one.
TEST_F(CudaCrFused, BigBatchesGiveTheSameBits) {
  constexpr double kMm = 8;
  constexpr int kBinsHere = 256;
  constexpr size_t kBig = 70000;
  if (!prepare_level(kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  const std::vector<double>& small = fixture().matrices.at(kMm);
  const std::vector<double> far = far_away_matrix();
  std::vector<double> big;
  for (size_t t = 0; t < kBig; ++t) {
    const double* m = t % 7 == 6 ? far.data() : small.data() + 16 * (t % kTransforms);
    big.insert(big.end(), m, m + 16);
  }
  for (const bool weighted : {false, true}) {
    const std::string kernel = weighted ? "weighted kernel" : "plain kernel";
    std::map<std::string, std::string> params = {{"scheme", "fused"}, {"bins", std::to_string(kBinsHere)}};
    if (weighted) params["border_mm"] = "6";
    auto gpu = gpu_cost_on_level(params, kMm);
    std::vector<double> expected(kTransforms), expected_overlap(kTransforms);
    gpu->evaluate(small.data(), kTransforms, expected.data(), expected_overlap.data());
    std::vector<double> costs(kBig), overlaps(kBig);
    gpu->evaluate(big.data(), kBig, costs.data(), overlaps.data());
    size_t wrong = 0;
    for (size_t t = 0; t < kBig; ++t) {
      const bool is_far = t % 7 == 6;
      const double want = is_far ? 1.0 : expected[t % kTransforms];
      const double want_overlap = is_far ? 0.0 : expected_overlap[t % kTransforms];
      if (costs[t] == want && overlaps[t] == want_overlap) continue;
      if (++wrong <= 5)
        ADD_FAILURE() << kernel << ", transform " << t << " of " << kBig << " (launch " << t / 65535
                      << ", index " << t % 65535 << " in it" << (is_far ? ", no overlap" : "") << "): cost "
                      << costs[t] << " overlap " << overlaps[t] << ", expected " << want << " and " << want_overlap;
    }
    EXPECT_EQ(wrong, 0u) << kernel << ": transforms of the big batch that differ from the batch of 100";
    std::vector<double> after(kTransforms);
    gpu->evaluate(small.data(), kTransforms, after.data());
    EXPECT_EQ(after, expected) << kernel << ": a batch of 100 after the big one differs (sums or tickets not reset)";
  }
}

// fused's partition of the spans over blocks and warps, and the last-block finish, for the
// extremes: one block for all spans (one ticket), more blocks than warps of work (blocks
// without spans still take their ticket), one warp a block and 32 warps a block (the finish
// step's block sums). Each must agree with cpu.cr and repeat bit for bit.
TEST_F(CudaCrFused, AnyBlockPartitionAgreesWithTheCpuReference) {
  constexpr double kMm = 8;
  constexpr int kBinsHere = 128;
  constexpr int kCount = 20;
  if (!prepare_level(kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  Fixture& f = fixture();
  const auto& cpu = f.cpu_costs.at({kBinsHere, kMm});
  const auto& cpu_overlap = f.cpu_overlaps.at({kBinsHere, kMm});
  const std::pair<const char*, const char*> shapes[] = {{"1", "256"}, {"7", "32"}, {"5000", "1024"}, {"0", "1024"}};
  for (const auto& [blocks, threads] : shapes) {
    const std::string shape = std::string("blocks=") + blocks + " threads_per_block=" + threads;
    auto gpu = gpu_cost_on_level(
        {{"scheme", "fused"}, {"bins", std::to_string(kBinsHere)}, {"blocks", blocks}, {"threads_per_block", threads}},
        kMm);
    std::vector<double> costs(kCount), overlaps(kCount), again(kCount);
    gpu->evaluate(f.matrices.at(kMm).data(), kCount, costs.data(), overlaps.data());
    gpu->evaluate(f.matrices.at(kMm).data(), kCount, again.data());
    for (int t = 0; t < kCount; ++t) {
      EXPECT_LE(std::fabs(costs[t] - cpu[t]) / std::max(cpu[t], 1e-3), tolerance("fused"))
          << shape << ", transform " << t << ": gpu " << costs[t] << " cpu " << cpu[t];
      EXPECT_NEAR(overlaps[t], cpu_overlap[t], 1e-6) << shape << ", transform " << t;
    }
    EXPECT_EQ(again, costs) << shape << ": a second call differs (not bitwise repeatable, or sums not reset)";
  }
}

// A block of fused adds at most 65536 samples to its 32-bit histogram words: fewer blocks than
// that takes are raised to the fewest that keep each block within it (2 mm: 1.3 M voxels, so
// at least 21 blocks), with the same costs as the default partition's within the tolerance,
// and bit for bit between calls.
TEST_F(CudaCrFused, TooFewBlocksAreRaisedToTheHistogramLimit) {
  constexpr double kMm = 2;
  constexpr int kBinsHere = 128;
  constexpr int kCount = 10;
  if (!prepare_level(kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  Fixture& f = fixture();
  const auto& cpu = f.cpu_costs.at({kBinsHere, kMm});
  auto gpu = gpu_cost_on_level({{"scheme", "fused"}, {"bins", std::to_string(kBinsHere)}, {"blocks", "1"}}, kMm);
  std::vector<double> costs(kCount), again(kCount);
  gpu->evaluate(f.matrices.at(kMm).data(), kCount, costs.data());
  gpu->evaluate(f.matrices.at(kMm).data(), kCount, again.data());
  for (int t = 0; t < kCount; ++t)
    EXPECT_LE(std::fabs(costs[t] - cpu[t]) / std::max(cpu[t], 1e-3), tolerance("fused"))
        << "blocks=1 at 2 mm, transform " << t << ": gpu " << costs[t] << " cpu " << cpu[t];
  EXPECT_EQ(again, costs) << "blocks=1 at 2 mm: a second call differs";
}

// Rows longer than a block's histogram limit cannot be split over blocks: refused at
// set_reference naming the schemes that can take them.
TEST_F(CudaCrFused, RowsLongerThanTheHistogramLimitAreRefusedNamingAlternatives) {
  Image wide;
  wide.dims = {70000, 2, 2};
  wide.data.resize(wide.voxel_count());
  for (size_t i = 0; i < wide.data.size(); ++i) wide.data[i] = float(i % 97);
  const Component& c = fixture().host.require(RP_KIND_COST, "cuda.cr");
  CostInstance gpu(c, fixture().services, resolve_params(c, {{"scheme", "fused"}}));
  try {
    gpu.set_reference(wide, nullptr);
    FAIL() << "a 70000-voxel row should be refused by fused";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_UNSUPPORTED) << e.what();
    EXPECT_NE(std::string(e.what()).find("scheme5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("70000"), std::string::npos) << e.what();
  }
}

// set_reference / set_moving rebuild everything a level needs (spans, bins, hot bin, mean,
// fixed-point bounds) in parallel slabs: the same images twice, and a level left and taken
// back (the optimiser's level switches), must give the same bits as the first time, in both
// fused kernels and for a scheme on the gridded path.
TEST_P(CudaCr, SettingImagesAgainOrSwitchingLevelsRepeatsTheCosts) {
  const std::string scheme = GetParam();
  if (!deterministic(scheme)) GTEST_SKIP() << scheme << " is not bitwise repeatable (float atomics)";
  constexpr int kBinsHere = 256;
  constexpr int kCount = 20;
  for (double mm : {1.0, 2.0})
    if (!prepare_level(mm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  Fixture& f = fixture();
  for (const std::string border : {"0", "6"}) {
    const std::string what = scheme + " border_mm=" + border;
    auto gpu = make_cost("cuda.cr", {{"scheme", scheme}, {"bins", std::to_string(kBinsHere)}, {"border_mm", border}});
    auto costs_at = [&](double mm) {
      std::vector<double> costs(kCount), overlaps(kCount);
      gpu->evaluate(f.matrices.at(mm).data(), kCount, costs.data(), overlaps.data());
      costs.insert(costs.end(), overlaps.begin(), overlaps.end());
      return costs;
    };
    auto set_level = [&](double mm) {
      gpu->set_reference(f.levels.at(mm).first, nullptr);
      gpu->set_moving(f.levels.at(mm).second, nullptr);
    };
    set_level(1);
    const std::vector<double> first = costs_at(1);
    if (border == "0")  // the cpu.cr costs of the fixture have no border
      for (int t = 0; t < kCount; ++t)
        EXPECT_LE(std::fabs(first[t] - f.cpu_costs.at({kBinsHere, 1.0})[t]) / std::max(first[t], 1e-3),
                  tolerance(scheme))
            << what << " at 1 mm, transform " << t << ": gpu " << first[t] << " cpu "
            << f.cpu_costs.at({kBinsHere, 1.0})[t];
    set_level(1);
    EXPECT_EQ(costs_at(1), first) << what << ": the same images set again give other costs or overlaps at 1 mm";
    set_level(2);
    const std::vector<double> coarse = costs_at(2);
    set_level(1);
    EXPECT_EQ(costs_at(1), first) << what << ": 1 mm after 2 mm differs from 1 mm the first time";
    set_level(2);
    EXPECT_EQ(costs_at(2), coarse) << what << ": 2 mm after 1 mm differs from 2 mm the first time";
    // The reference alone set again (the moving image kept), as in batch mode.
    gpu->set_reference(f.levels.at(2.0).first, nullptr);
    EXPECT_EQ(costs_at(2), coarse) << what << ": set_reference alone again changed the 2 mm costs";
  }
}
