// cuda.mi / cuda.nmi with partial_volume (Maes et al. 1997; scheme privatised) against cpu.mi /
// cpu.nmi with partial_volume on chris_t1 / chris_PD (label gpu). The GPU splits each sample's
// weight over its 8 neighbours in fixed point (regpipe_common/partial_volume_weights.hpp,
// 2^-20 of a sample), cpu.mi in double, so the two differ by the quantisation of the parts:
// - a CPU emulation of the fixed-point histogram is held to cpu.mi within kPvTolerance (the
//   quantisation error alone; runs without a device), and the GPU to the emulation within the
//   exact schemes' 1e-10 (the same integers: no part lost, misplaced or rounded otherwise);
// - the GPU to cpu.mi / cpu.nmi within kPvTolerance on 100 random transforms at 8/4/2/1 mm,
//   the overlap exactly, bitwise repeatable and independent of k;
// - the validation errors that need a device (tests/unit/cost_mi_cuda_params_test.cpp has
//   those that do not).
#include "cost_mi_cuda_fixture.hpp"

#include <regpipe_common/measure_math.hpp>
#include <regpipe_common/partial_volume_weights.hpp>
#include <regpipe_common/prepared_image.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace regpipe;
using namespace regpipe::mi_test;

namespace {

// Bin counts with partial volume: bins x bins 32-bit counters must fit in shared memory (an
// H100's 227 KB: at most 241 bins).
constexpr int kPvBins[] = {32, 64, 128, 192};

// Absolute tolerance (nats for MI; NMI is a ratio in [1, 2]) between the fixed-point and the
// double partial-volume histogram's cost. Each part is within 1.5 u of its exact weight
// (u = 2^-20 of a sample, hierarchical rounding to nearest), and only samples split over several
// bins carry an error (a sample in one bin weighs exactly one). To first order
// dMI = (1/N) sum_p e_p g_p over the parts p, with e_p the part's rounding error (zero mean,
// variance <= u^2 / 4: up to three roundings of +-u/2) and g_p = log(p(r,m) / (p(r) p(m))) of
// its bin, so sigma(dMI) <= u sqrt(2 E[g^2] / N) for at most 8 N parts. With |g| <~ 5 nats and
// N >= 1.5e4 overlapping samples at 8 mm, sigma <= 9.5e-7 x 0.058 = 5.5e-8; NMI's error is
// smaller (dH / H with H ~ 5). 1e-6 is 18 sigma at 8 mm and more at finer levels (N grows 8x a
// level), far above the model's error, yet ~70x below what one misplaced sample does at 8 mm
// (~1/N); the emulation check below catches single samples at every level. Measured: README.
constexpr double kPvTolerance = 1e-6;

// The fixed-point partial-volume histogram the GPU is meant to count, in samples: cost_cpu's
// traversal (position in double rounded once to float, the sampling domain) and
// add_partial_volume's neighbours (upper ones clamped) and fractions, the parts from
// regpipe_common::partial_volume_weights, summed as integers.
std::vector<double> fixed_point_histogram(const BinnedPair& p, const double* matrix) {
  const regpipe_common::Grid& mg = p.mov.grid;
  const int bins = p.ref.binning.bins;
  std::vector<uint64_t> units(std::size_t(bins) * bins, 0);
  for_each_inside_voxel(p, matrix, [&](std::size_t index, float px, float py, float pz) {
    const int x0 = int(px), y0 = int(py), z0 = int(pz);
    uint32_t w[8];
    regpipe_common::partial_volume_weights(px - float(x0), py - float(y0), pz - float(z0), w);
    const std::size_t xs[2] = {std::size_t(x0), std::size_t(std::min(x0 + 1, mg.nx - 1))};
    const std::size_t ys[2] = {std::size_t(y0), std::size_t(std::min(y0 + 1, mg.ny - 1))};
    const std::size_t zs[2] = {std::size_t(z0), std::size_t(std::min(z0 + 1, mg.nz - 1))};
    uint64_t* row = units.data() + std::size_t(p.ref.voxel_bins[index]) * bins;
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
          const std::size_t n = xs[a] + std::size_t(mg.nx) * (ys[b] + std::size_t(mg.ny) * zs[c]);
          row[p.mov.voxel_bins[n]] += w[a + 2 * b + 4 * c];
        }
  });
  std::vector<double> h(units.size());
  for (std::size_t e = 0; e < units.size(); ++e) h[e] = double(units[e]) / double(regpipe_common::kPartialVolumeOne);
  return h;
}

double cost_of(const std::vector<double>& h, int bins, const std::string& measure) {
  const auto e = regpipe_common::histogram_entropies(h.data(), std::size_t(bins), std::size_t(bins));
  return measure == "mi" ? regpipe_common::mutual_information_cost(e) : regpipe_common::normalised_mi_cost(e);
}

std::map<std::string, std::string> pv_params(int bins) {
  return {{"bins", std::to_string(bins)}, {"partial_volume", "true"}};
}

// cpu.<measure> with partial_volume on the first `count` transforms of level `mm`, computed once.
struct CpuPv {
  std::vector<double> costs, overlaps;
};
const CpuPv& cpu_pv(const std::string& measure, int bins, double mm, int count) {
  static std::map<std::tuple<std::string, int, double, int>, CpuPv> cache;
  const auto key = std::make_tuple(measure, bins, mm, count);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  auto cpu = make_cost("cpu." + measure, pv_params(bins));
  cpu->set_reference(fixture().levels.at(mm).first, nullptr);
  cpu->set_moving(fixture().levels.at(mm).second, nullptr);
  CpuPv r{std::vector<double>(count), std::vector<double>(count)};
  cpu->evaluate(fixture().matrices.at(mm).data(), std::size_t(count), r.costs.data(), r.overlaps.data());
  return cache.emplace(key, std::move(r)).first->second;
}

bool load_level(double mm) { return prepare_level("mi", mm, 32); }

class CudaMiPartialVolume : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
  const std::string& measure() const { return GetParam(); }
};

// Expects cuda.mi with `params` to be refused with `status` and a message containing `needle`.
void expect_refused(const std::map<std::string, std::string>& params, rp_status status, const std::string& needle) {
  try {
    make_cost("cuda.mi", params);
    ADD_FAILURE() << "cuda.mi accepted parameters that should be refused (expected: " << needle << ")";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "the error should say '" << needle << "'; it says: " << e.what();
  }
}

}  // namespace

// No device needed: the fixed-point quantisation alone stays within kPvTolerance of cpu.mi's
// double weights (20 transforms at 8, 4 and 2 mm, every bin count).
TEST(CudaMiPartialVolumeQuantisation, FixedPointHistogramIsWithinToleranceOfCpuPartialVolume) {
  constexpr int kCount = 20;
  for (double mm : {8.0, 4.0, 2.0}) {
    if (!load_level(mm)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
    for (int bins : kPvBins) {
      const BinnedPair p = binned_pair(mm, bins);
      for (const std::string measure : {"mi", "nmi"}) {
        const CpuPv& cpu = cpu_pv(measure, bins, mm, kCount);
        double worst = 0.0;
        for (int t = 0; t < kCount; ++t) {
          const double fixed = cost_of(fixed_point_histogram(p, fixture().matrices.at(mm).data() + 16 * t), bins, measure);
          worst = std::max(worst, std::fabs(fixed - cpu.costs[t]));
          EXPECT_LE(std::fabs(fixed - cpu.costs[t]), kPvTolerance)
              << measure << " bins " << bins << " at " << mm << " mm, transform " << t << ": fixed point " << fixed
              << " cpu." << measure << " " << cpu.costs[t];
        }
        std::printf("fixed point %-3s bins %3d %g mm: max |difference| to cpu.%s partial_volume %.2e\n",
                    measure.c_str(), bins, mm, measure.c_str(), worst);
      }
    }
  }
}

// The GPU counts exactly the fixed-point histogram (the same integers): within the exact
// schemes' finish rounding (1e-10) of the emulation, at every level, a few transforms.
TEST_P(CudaMiPartialVolume, CountsExactlyTheFixedPointHistogram) {
  constexpr int kCount = 4;
  for (double mm : kLevels) {
    if (!load_level(mm)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
    for (int bins : {64, 192}) {
      const BinnedPair p = binned_pair(mm, bins);
      auto gpu = gpu_cost_on_level(measure(), pv_params(bins), mm);
      std::vector<double> costs(kCount);
      gpu->evaluate(fixture().matrices.at(mm).data(), kCount, costs.data());
      for (int t = 0; t < kCount; ++t) {
        const double expected =
            cost_of(fixed_point_histogram(p, fixture().matrices.at(mm).data() + 16 * t), bins, measure());
        EXPECT_LE(std::fabs(costs[t] - expected) / std::max(std::fabs(expected), 1e-3), kExactTolerance)
            << measure() << " bins " << bins << " at " << mm << " mm, transform " << t << ": gpu " << costs[t]
            << " emulation " << expected << " (a larger gap than rounding means a part differs)";
      }
    }
  }
}

TEST_P(CudaMiPartialVolume, AgreesWithTheCpuPartialVolumeOnRealImages) {
  for (double mm : kLevels) {
    if (!load_level(mm)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
    for (int bins : kPvBins) {
      const CpuPv& cpu = cpu_pv(measure(), bins, mm, kTransforms);
      auto gpu = gpu_cost_on_level(measure(), pv_params(bins), mm);
      const double* matrices = fixture().matrices.at(mm).data();
      std::vector<double> costs(kTransforms), overlaps(kTransforms);
      gpu->evaluate(matrices, kTransforms, costs.data(), overlaps.data());
      double worst = 0.0;
      for (int t = 0; t < kTransforms; ++t) {
        worst = std::max(worst, std::fabs(costs[t] - cpu.costs[t]));
        EXPECT_LE(std::fabs(costs[t] - cpu.costs[t]), kPvTolerance)
            << measure() << " bins " << bins << " at " << mm << " mm, transform " << t << ": gpu " << costs[t]
            << " cpu " << cpu.costs[t];
        EXPECT_DOUBLE_EQ(overlaps[t], cpu.overlaps[t])
            << measure() << " bins " << bins << " at " << mm << " mm, transform " << t
            << ": the overlap counts differ, so samples were lost or invented";
      }
      std::printf("privatised+pv %-3s bins %3d %g mm: max |difference| to cpu.%s partial_volume %.2e\n",
                  measure().c_str(), bins, mm, measure().c_str(), worst);
      // Integers and fixed summation orders: k=1 gives the batch's bits, the batch again too.
      std::vector<double> single(3);
      for (int t = 0; t < 3; ++t) gpu->evaluate(matrices + 16 * t, 1, &single[t]);
      for (int t = 0; t < 3; ++t) EXPECT_EQ(single[t], costs[t]) << "transform " << t << ": k=1 and k=100 differ";
      std::vector<double> again(kTransforms);
      gpu->evaluate(matrices, kTransforms, again.data());
      EXPECT_EQ(again, costs) << "partial_volume is documented as bitwise repeatable";
    }
  }
}

// No sample: the worst cost and overlap 0; the neighbours in the batch are not disturbed.
TEST_P(CudaMiPartialVolume, NoOverlapCostsTheWorstValue) {
  constexpr double kMm = 8;
  if (!load_level(kMm)) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  auto gpu = gpu_cost_on_level(measure(), pv_params(64), kMm);
  const std::vector<double>& m = fixture().matrices.at(kMm);
  std::vector<double> matrices(m.begin(), m.begin() + 16);
  const std::vector<double> far = far_away_matrix();
  matrices.insert(matrices.end(), far.begin(), far.end());
  std::vector<double> costs(2), overlaps(2, -1.0), alone(1);
  gpu->evaluate(matrices.data(), 2, costs.data(), overlaps.data());
  gpu->evaluate(matrices.data(), 1, alone.data());
  EXPECT_EQ(costs[1], measure() == "mi" ? 0.0 : -1.0);
  EXPECT_EQ(overlaps[1], 0.0);
  EXPECT_EQ(costs[0], alone[0]);
}

INSTANTIATE_TEST_SUITE_P(Measures, CudaMiPartialVolume, ::testing::Values(std::string("mi"), std::string("nmi")),
                         [](const auto& i) { return i.param; });

// With a device: bins beyond what the device's shared memory holds as 32-bit counters are
// refused naming the limit (256 x 256 x 4 bytes exceed an H100's 227 KB).
TEST(CudaMiPartialVolumeErrors, TooManyBinsAreRefusedNamingTheLimit) {
  if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  expect_refused({{"partial_volume", "true"}, {"bins", "256"}}, RP_INVALID_ARGUMENT, "at most bins=");
  expect_refused({{"partial_volume", "true"}, {"bins", "256"}}, RP_INVALID_ARGUMENT, "partial_volume=false");
  EXPECT_NO_THROW(make_cost("cuda.mi", {{"partial_volume", "true"}, {"bins", "192"}}));
}
