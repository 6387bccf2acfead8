// cuda.ls and cuda.mattes against their CPU references cpu.ls and cpu.mattes (label gpu:
// skipped without a CUDA device, except the checks that need none): RP_EXT_DENSE_COST from host
// and device memory, with and without a fixed mask, on an oblique and an axis-aligned
// anisotropic grid, Mattes with 12, 32 (ANTs' default) and 128 bins; the affine evaluate.
// Tolerances: the dense cost within 1e-12 relative (double on both sides; only the order of
// the sums differs: the histogram's and the moments'), the LPS world gradient within 1e-6 of its
// largest component (float output; Mattes' derivative weights come from that histogram); the
// affine cost within 1e-9 relative. Measured on an NVIDIA H100: costs within 5.3e-16, gradients
// bit for bit. Each GPU cost is also the same bits on a second call and from device memory
// (fixed-order reductions, no floating-point atomics).
#include "dense_cost_case.hpp"

#include <cstdio>

namespace regpipe::test::dense_cost {
namespace {

struct Twin {
  const char* gpu;
  const char* cpu;
  std::map<std::string, std::string> params;  // the same for both
  const char* name;
};

class CudaDenseCostTwin : public ::testing::TestWithParam<Twin> {
 protected:
  void SetUp() override {
    if (const std::string why = gpu_unavailable(GetParam().gpu); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(CudaDenseCostTwin, DenseEvaluationAgreesWithTheCpuReference) {
  const Twin& t = GetParam();
  Difference worst;
  for (const bool oblique : {true, false}) {
    const DenseCase c(oblique ? oblique_grid() : axis_grid());
    for (const bool masked : {false, true}) {
      auto cpu = make_cost(t.cpu, t.params);
      auto gpu = make_cost(t.gpu, t.params);
      const std::string what = std::string(t.name) + (masked ? " masked" : "") + (oblique ? " oblique" : " axis-aligned");
      const DenseResult expected = evaluate_on_host(*cpu, c, masked);
      const DenseResult host = evaluate_on_host(*gpu, c, masked);
      const Difference d = expect_same(expected, host, what + " (host memory)", 1e-12, 1e-6);
      worst.cost_relative = std::max(worst.cost_relative, d.cost_relative);
      worst.gradient_relative = std::max(worst.gradient_relative, d.gradient_relative);
      // The same bits again, and the cost alone is the same cost.
      const DenseResult again = evaluate_on_host(*gpu, c, masked);
      EXPECT_EQ(again.cost, host.cost) << what;
      EXPECT_EQ(again.gradient, host.gradient) << what;
      double alone = 0;
      gpu->evaluate_dense(c.request(masked, &alone, nullptr));
      EXPECT_EQ(alone, host.cost) << what;
#ifdef REGPIPE_TESTS_WITH_CUDA
      const DenseResult device = evaluate_on_device(*gpu, c.request(masked, nullptr, nullptr));
      EXPECT_EQ(device.cost, host.cost) << what << " (device memory)";
      EXPECT_EQ(device.gradient, host.gradient) << what << " (device memory)";
#endif
    }
  }
  std::printf("%s against %s: cost within %.2g relative, gradient within %.2g of its largest component\n", t.gpu,
              t.cpu, worst.cost_relative, worst.gradient_relative);
  RecordProperty("cost_relative", std::to_string(worst.cost_relative));
  RecordProperty("gradient_relative", std::to_string(worst.gradient_relative));
}

TEST_P(CudaDenseCostTwin, AffineEvaluateAgreesWithTheCpuReference) {
  const Twin& t = GetParam();
  const AffineCase a{DenseCase(oblique_grid())};
  for (const bool weighted : {false, true})
    expect_affine_same(*make_cost(t.cpu, t.params), *make_cost(t.gpu, t.params), a, weighted, t.name);
}

TEST_P(CudaDenseCostTwin, RefusesANonFiniteVoxelAsTheCpuReferenceDoes) {
  expect_refuses_non_finite(*make_cost(GetParam().gpu, GetParam().params));
}

INSTANTIATE_TEST_SUITE_P(
    Costs, CudaDenseCostTwin,
    ::testing::Values(Twin{"cuda.ls", "cpu.ls", {}, "mean_squares"},
                      Twin{"cuda.mattes", "cpu.mattes", {}, "mattes_32_bins"},
                      Twin{"cuda.mattes", "cpu.mattes", {{"bins", "12"}}, "mattes_12_bins"},
                      Twin{"cuda.mattes", "cpu.mattes", {{"bins", "128"}}, "mattes_128_bins"}),
    [](const ::testing::TestParamInfo<Twin>& info) { return std::string(info.param.name); });

// Checked wherever the plugin is built: the schema's range comes before any device is looked for.
TEST(CudaMattes, RefusesMoreBinsThanAWarpHistogramHolds) {
  if (plugins().host.find(RP_KIND_COST, "cuda.mattes") == nullptr) GTEST_SKIP() << "cuda.mattes is not built (no nvcc)";
  for (const char* bins : {"4", "129"}) {
    try {
      make_cost("cuda.mattes", {{"bins", bins}});
      FAIL() << "bins=" << bins << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("bins"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace regpipe::test::dense_cost
