// cuda.mi and cuda.nmi against the CPU references cpu.mi and cpu.nmi on real images: every
// scheme, bins 32..256, levels 8/4/2/1 mm, 100 random transforms each (label gpu: skipped
// without a CUDA device, except the no-device error path, checked wherever the plugin is built).
#include "cost_mi_cuda_fixture.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

using namespace regpipe;
using namespace regpipe::mi_test;

namespace {

// The schemes that count integers: exact, so they match the CPU to rounding of the finish.
// (approximate is not exact: cost_mi_cuda_approximate_test.cpp holds it to its documented error.)
const std::vector<std::string> kSchemes = {"privatised",        "per_warp",  "sort_and_count",
                                           "per_thread_packed", "presorted", "adaptive"};

class CudaMi : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  void SetUp() override {
    if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
  const std::string& scheme() const { return std::get<0>(GetParam()); }
  const std::string& measure() const { return std::get<1>(GetParam()); }
};

class CudaMiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
};

// Expects `params` to be refused when cuda.mi is created, with a message containing `needle`.
void expect_refused(const std::map<std::string, std::string>& params, const std::string& needle) {
  try {
    make_cost("cuda.mi", params);
    ADD_FAILURE() << "cuda.mi accepted parameters that should be refused (expected: " << needle << ")";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "the error should say '" << needle << "'; it says: " << e.what();
  }
}

}  // namespace

TEST_P(CudaMi, AgreesWithTheCpuReferenceOnRealImages) {
  for (double mm : kLevels)
    for (int bins : kBins) {
      if (!prepare_level(measure(), mm, bins)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
      Fixture& f = fixture();
      const auto params = scheme_params(scheme(), bins);
      if (params.empty()) continue;
      auto gpu = gpu_cost_on_level(measure(), params, mm);
      std::vector<double> costs(kTransforms), overlaps(kTransforms);
      gpu->evaluate(f.matrices.at(mm).data(), kTransforms, costs.data(), overlaps.data());
      const auto& cpu = f.cpu_costs.at({measure(), bins, mm});
      const auto& cpu_overlap = f.cpu_overlaps.at({measure(), bins, mm});
      double worst = 0.0;
      for (int t = 0; t < kTransforms; ++t) {
        const double rel = std::fabs(costs[t] - cpu[t]) / std::max(std::fabs(cpu[t]), 1e-3);
        worst = std::max(worst, rel);
        EXPECT_LE(rel, kExactTolerance) << scheme() << " " << measure() << " bins " << bins << " at " << mm
                                        << " mm, transform " << t << ": gpu " << costs[t] << " cpu " << cpu[t]
                                        << " (a larger gap than rounding means a count differs)";
        EXPECT_DOUBLE_EQ(overlaps[t], cpu_overlap[t])
            << scheme() << " " << measure() << " bins " << bins << " at " << mm << " mm, transform " << t
            << ": the overlap counts differ, so samples were lost or invented";
      }
      std::printf("%-10s %-3s bins %3d %g mm: max relative difference to cpu.%s %.2e\n", scheme().c_str(),
                  measure().c_str(), bins, mm, measure().c_str(), worst);
      // Integer counts and fixed summation orders: one at a time gives the batch's bits, and
      // so does the same batch again.
      std::vector<double> single(3);
      for (int t = 0; t < 3; ++t) gpu->evaluate(f.matrices.at(mm).data() + 16 * t, 1, &single[t]);
      for (int t = 0; t < 3; ++t)
        EXPECT_EQ(single[t], costs[t]) << scheme() << " transform " << t << ": k=1 and k=100 differ";
      std::vector<double> again(kTransforms);
      gpu->evaluate(f.matrices.at(mm).data(), kTransforms, again.data());
      EXPECT_EQ(again, costs) << scheme() << " is documented as bitwise repeatable";
    }
}

// cpu.<measure> and this scheme's cuda.<measure>, both with `common`, on the first `count`
// transforms of level `mm` (prepare_level first): every cost within kExactTolerance.
void expect_scheme_matches_cpu(const std::string& scheme, const std::string& measure,
                               const std::map<std::string, std::string>& common, double mm, int count,
                               const std::string& what) {
  auto cpu = make_cost("cpu." + measure, common);
  auto params = common;
  params["scheme"] = scheme;
  params["threads_per_block"] = std::to_string(scheme_threads(scheme, std::stoi(common.at("bins"))));
  auto gpu = make_cost("cuda." + measure, params);
  const auto& [ref, mov] = fixture().levels.at(mm);
  for (CostInstance* c : {cpu.get(), gpu.get()}) {
    c->set_reference(ref, nullptr);
    c->set_moving(mov, nullptr);
  }
  const double* matrices = fixture().matrices.at(mm).data();
  std::vector<double> expected(count), costs(count);
  cpu->evaluate(matrices, count, expected.data());
  gpu->evaluate(matrices, count, costs.data());
  for (int t = 0; t < count; ++t)
    EXPECT_LE(std::fabs(costs[t] - expected[t]) / std::max(std::fabs(expected[t]), 1e-3), kExactTolerance)
        << scheme << " " << measure << " " << what << " at " << mm << " mm, transform " << t << ": gpu " << costs[t]
        << " cpu " << expected[t];
}

TEST_P(CudaMi, NearestNeighbourSamplingAgreesWithTheCpuReference) {
  constexpr double kMm = 4;
  constexpr int kBinsHere = 64, kCount = 20;
  if (!prepare_level(measure(), kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  const std::map<std::string, std::string> common = {{"bins", std::to_string(kBinsHere)},
                                                     {"interpolation", "nearest"}};
  expect_scheme_matches_cpu(scheme(), measure(), common, kMm, kCount, "nearest");
}

// No sample: the worst cost (MI 0, NMI -1) and overlap 0, as the CPU; the neighbours in the
// batch and the next call are not disturbed.
TEST_P(CudaMi, NoOverlapCostsTheWorstValueAndLeavesTheOthersAlone) {
  constexpr double kMm = 8;
  constexpr int kBinsHere = 64;
  if (!prepare_level(measure(), kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  Fixture& f = fixture();
  auto gpu = gpu_cost_on_level(measure(), scheme_params(scheme(), kBinsHere), kMm);
  std::vector<double> matrices(f.matrices.at(kMm).begin(), f.matrices.at(kMm).begin() + 16);
  const std::vector<double> far = far_away_matrix();
  matrices.insert(matrices.end(), far.begin(), far.end());
  matrices.insert(matrices.end(), f.matrices.at(kMm).begin() + 16, f.matrices.at(kMm).begin() + 32);
  std::vector<double> costs(3), overlaps(3, -1.0);
  gpu->evaluate(matrices.data(), 3, costs.data(), overlaps.data());
  EXPECT_EQ(costs[1], measure() == "mi" ? 0.0 : -1.0) << scheme() << ": no overlap costs the worst value";
  EXPECT_EQ(overlaps[1], 0.0) << scheme() << ": no overlap has overlap 0";
  const auto& cpu = f.cpu_costs.at({measure(), kBinsHere, kMm});
  for (int i : {0, 2})
    EXPECT_LE(std::fabs(costs[i] - cpu[i / 2]) / std::max(std::fabs(cpu[i / 2]), 1e-3), kExactTolerance)
        << scheme() << " transform " << i / 2 << " next to one without overlap: gpu " << costs[i] << " cpu "
        << cpu[i / 2];
  std::vector<double> again(1);
  gpu->evaluate(matrices.data(), 1, again.data());
  EXPECT_EQ(again[0], costs[0]) << scheme() << ": a call's counts leaked into the next call";
}

// More transforms than one launch takes (grid.y <= 65535): every transform of a batch of
// 70 000 (the 100 repeated, every 7th without overlap) gets the bits it gets in a batch of 100.
TEST_P(CudaMi, BatchesLargerThanOneLaunchGiveTheSameBits) {
  constexpr double kMm = 8;
  constexpr int kBinsHere = 32;
  constexpr size_t kBig = 70000;
  if (!prepare_level(measure(), kMm, kBinsHere)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  const std::vector<double>& small = fixture().matrices.at(kMm);
  const std::vector<double> far = far_away_matrix();
  std::vector<double> big;
  for (size_t t = 0; t < kBig; ++t) {
    const double* m = t % 7 == 6 ? far.data() : small.data() + 16 * (t % kTransforms);
    big.insert(big.end(), m, m + 16);
  }
  auto gpu = gpu_cost_on_level(measure(), scheme_params(scheme(), kBinsHere), kMm);
  std::vector<double> reference(kTransforms), costs(kBig);
  gpu->evaluate(small.data(), kTransforms, reference.data());
  gpu->evaluate(big.data(), kBig, costs.data());
  const double worst = measure() == "mi" ? 0.0 : -1.0;
  size_t wrong = 0;
  for (size_t t = 0; t < kBig; ++t) {
    const double expected = t % 7 == 6 ? worst : reference[t % kTransforms];
    if (costs[t] != expected && ++wrong <= 5)
      ADD_FAILURE() << scheme() << " transform " << t << " of " << kBig << " (launch " << t / 65535 << "): "
                    << costs[t] << " instead of " << expected;
  }
  EXPECT_EQ(wrong, 0u);
}

// sort_and_count, presorted and adaptive keep no full histogram in shared memory, so they take
// more bins than a block's shared memory holds: 1024 x 1024 joint bins (sort_and_count: 21-bit
// keys with the sentinel; presorted: rows of 1024 counters; adaptive: most bins uncached, in
// global memory) still count what cpu.mi counts.
TEST_P(CudaMi, SchemesWithoutASharedHistogramTakeMoreBinsThanSharedMemoryHolds) {
  if (scheme() != "sort_and_count" && scheme() != "presorted" && scheme() != "adaptive")
    GTEST_SKIP() << scheme() << " is limited by shared memory";
  constexpr double kMm = 4;
  constexpr int kBinsHere = 1024, kCount = 10;
  if (!prepare_level(measure(), kMm, 64)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  const std::map<std::string, std::string> common = {{"bins", std::to_string(kBinsHere)}};
  expect_scheme_matches_cpu(scheme(), measure(), common, kMm, kCount,
                            "bins 1024 (a gap means a key's bits were cut or a count misplaced)");
}

INSTANTIATE_TEST_SUITE_P(Schemes, CudaMi,
                         ::testing::Combine(::testing::ValuesIn(kSchemes), ::testing::Values(std::string("mi"), std::string("nmi"))),
                         [](const auto& i) { return std::get<0>(i.param) + "_" + std::get<1>(i.param); });

TEST_F(CudaMiErrors, BadParametersAreRefusedWithTheReason) {
  expect_refused({{"bins", "1"}}, "bins=1 is below the minimum");
  expect_refused({{"scheme", "no_such_scheme"}}, "no_such_scheme");
  // 512 x 512 16-bit counters (512 KB) exceed any GPU's shared memory per block.
  expect_refused({{"scheme", "privatised"}, {"bins", "512"}}, "at most bins=");
  // 256 x 256 32-bit counters for one warp (256 KB) exceed an H100's 227 KB.
  expect_refused({{"scheme", "per_warp"}, {"bins", "256"}, {"threads_per_block", "32"}}, "at most bins=");
  // 256 x 256 2-bit counters for each of 32 threads (512 KB); 512 x 512 8-bit counters (256 KB).
  expect_refused({{"scheme", "per_thread_packed"}, {"bins", "256"}, {"threads_per_block", "32"}}, "at most bins=");
  expect_refused({{"scheme", "approximate"}, {"bins", "512"}}, "at most bins=");
  expect_refused({{"threads_per_block", "100"}}, "not a multiple of 32");
}

TEST_F(CudaMiErrors, WeightImagesAreRefusedNamingTheCpuMeasure) {
  if (!prepare_level("mi", 8, 64)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  const auto& [ref, mov] = fixture().levels.at(8);
  auto gpu = make_cost("cuda.nmi", {});
  try {
    gpu->set_reference(ref, &ref);
    FAIL() << "a reference weight image should be refused";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("cpu.nmi"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gpu->set_moving(mov, &mov), ComponentError);
  double cost = 0.0;
  const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  EXPECT_THROW(gpu->evaluate(identity, 1, &cost), ComponentError) << "no images were accepted";
}

// Runs everywhere the plugin is built: without a device the error names the CPU alternative;
// with one, an out-of-range device index is refused the same way.
TEST(CudaMiDevice, MissingDeviceIsAClearErrorNamingTheCpuAlternative) {
  for (const std::string measure : {"mi", "nmi"}) {
    const Component* c = fixture().host.find(RP_KIND_COST, "cuda." + measure);
    if (c == nullptr) GTEST_SKIP() << "cuda." << measure << " is not built (no nvcc)";
    try {
      CostInstance cost(*c, fixture().services, resolve_params(*c, {{"device", "63"}}));
      FAIL() << "device 63 should not exist";
    } catch (const ComponentError& e) {
      EXPECT_EQ(e.status(), RP_DEVICE);
      EXPECT_NE(std::string(e.what()).find("cpu." + measure), std::string::npos) << e.what();
    }
  }
}
