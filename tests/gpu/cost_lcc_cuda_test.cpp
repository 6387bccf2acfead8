// cuda.lcc against the CPU reference cpu.lcc (label gpu: skipped without a CUDA device, except
// the checks that need no device): RP_EXT_DENSE_COST from host and device memory, both
// schemes (separable, luo), radii 1, 2, 4 and 9, with and without a fixed mask, on an oblique and
// an axis-aligned anisotropic grid, the ANTs and the exact gradient; and the affine evaluate.
// Tolerances: the cost within 1e-9 relative (double on both sides, sums in another order);
// the LPS world gradient within 1e-5 of its largest component (float output).
#include "dense_cost_case.hpp"

using namespace regpipe;
using namespace regpipe::test::dense_cost;

namespace {

struct Variant {
  const char* scheme;
  const char* gradient;
};

class CudaLccDense : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    if (const std::string why = gpu_unavailable("cuda.lcc"); !why.empty()) GTEST_SKIP() << why;
  }
};

}  // namespace

TEST_P(CudaLccDense, AgreesWithCpuLcc) {
  const Variant v = GetParam();
  for (const bool oblique : {true, false}) {
    const DenseCase c(oblique ? oblique_grid() : axis_grid());
    for (const int radius : {1, 2, 4, 9})  // 9: past the radii cuda.lcc compiles with their loops unrolled
      for (const bool masked : {false, true}) {
        const std::map<std::string, std::string> common = {{"radius", std::to_string(radius)},
                                                           {"gradient", v.gradient}};
        auto params = common;
        params["scheme"] = v.scheme;
        auto cpu = make_cost("cpu.lcc", common);
        auto gpu = make_cost("cuda.lcc", params);
        const std::string what = std::string(v.scheme) + " " + v.gradient + " radius " + std::to_string(radius) +
                                 (masked ? " masked" : "") + (oblique ? " oblique" : " axis-aligned");
        DenseResult expected, host;
        cpu->evaluate_dense(c.request(masked, &expected.cost, expected.gradient.data()));
        gpu->evaluate_dense(c.request(masked, &host.cost, host.gradient.data()));
        expect_same(expected, host, what + " (host memory)");
        // The cost alone is the same cost.
        double alone = 0;
        gpu->evaluate_dense(c.request(masked, &alone, nullptr));
        EXPECT_EQ(alone, host.cost) << what;
#ifdef REGPIPE_TESTS_WITH_CUDA
        expect_same(expected, evaluate_on_device(*gpu, c.request(masked, nullptr, nullptr)), what + " (device memory)");
#endif
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, CudaLccDense,
                         ::testing::Values(Variant{"separable", "ants"}, Variant{"separable", "exact"},
                                           Variant{"luo", "ants"}),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return std::string(info.param.scheme) + "_" + info.param.gradient;
                         });

// Checked wherever the plugin is built: the refusal comes before any device is looked for.
TEST(CudaLcc, LuoWithTheExactGradientIsRefusedAtCreate) {
  const Component* c = plugins().host.find(RP_KIND_COST, "cuda.lcc");
  if (c == nullptr) GTEST_SKIP() << "cuda.lcc is not built (no nvcc)";
  try {
    make_cost("cuda.lcc", {{"scheme", "luo"}, {"gradient", "exact"}});
    FAIL() << "created";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("scheme=separable"), std::string::npos) << e.what();
  }
}

TEST(CudaLcc, RefusesWhatCpuLccRefusesWithItsMessage) {
  if (const std::string why = gpu_unavailable("cuda.lcc"); !why.empty()) GTEST_SKIP() << why;
  auto gpu = make_cost("cuda.lcc", {});
  expect_refuses_non_finite(*gpu);  // device images: checked by the moments pass (both schemes)
  expect_refuses_non_finite(*make_cost("cuda.lcc", {{"scheme", "luo"}}));
  const DenseCase c(axis_grid());
  double cost = 0;
  auto r = c.request(false, &cost, nullptr);
  r.voxel_to_world[0] = r.voxel_to_world[4] = r.voxel_to_world[8] = 0;  // axis 0 is zero
  EXPECT_THROW(gpu->evaluate_dense(r), ComponentError);
}

TEST(CudaLcc, AffineEvaluateAgreesWithCpuLcc) {
  if (const std::string why = gpu_unavailable("cuda.lcc"); !why.empty()) GTEST_SKIP() << why;
  const AffineCase a{DenseCase(oblique_grid())};
  for (const bool weighted : {false, true})
    for (const char* scheme : {"separable", "luo"})
      for (const int radius : {1, 2, 4}) {
        auto cpu = make_cost("cpu.lcc", {{"radius", std::to_string(radius)}});
        auto gpu = make_cost("cuda.lcc", {{"radius", std::to_string(radius)}, {"scheme", scheme}});
        expect_affine_same(*cpu, *gpu, a, weighted, std::string(scheme) + " radius " + std::to_string(radius));
      }
}
