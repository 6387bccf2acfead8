// cuda.lcc against the CPU reference cpu.lcc (label gpu: skipped without a CUDA device, except
// the checks that need no device): RP_EXT_DENSE_COST from host and device memory, both
// schemes (separable, luo), radii 1, 2 and 4, with and without a fixed mask, on an oblique and
// an axis-aligned anisotropic grid, the ANTs and the exact gradient; and the affine evaluate.
// Tolerances: the cost within 1e-9 relative (double on both sides, sums in another order);
// the LPS world gradient within 1e-5 of its largest component (float output).
#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe_common/fields/abi_views.hpp>

#include "support/test_support.hpp"

#include <Eigen/Geometry>

#ifdef REGPIPE_TESTS_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

using namespace regpipe;

namespace {

struct Fixture {
  PluginHost host{test::built_plugins()};
  HostServices services;
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

std::unique_ptr<CostInstance> make_cost(const std::string& id, const std::map<std::string, std::string>& params) {
  const Component& c = fixture().host.require(RP_KIND_COST, id);
  return std::make_unique<CostInstance>(c, fixture().services, resolve_params(c, params));
}

std::string gpu_unavailable() {
  return test::gpu_component_unavailable(fixture().host, RP_KIND_COST, "cuda.lcc").value_or("");
}

constexpr uint32_t kNx = 37, kNy = 30, kNz = 26;  // not multiples of 32: partial blocks and warps
constexpr std::size_t kVoxels = std::size_t(kNx) * kNy * kNz;

Eigen::Matrix4d oblique_grid() {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = Eigen::AngleAxisd(0.5, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix() *
                            Eigen::Vector3d(1.5, 1.2, 1.8).asDiagonal();
  m.topRightCorner<3, 1>() = Eigen::Vector3d(-14, -12, -10);
  return m;
}

Eigen::Matrix4d axis_grid() {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = Eigen::Vector3d(1.2, 0.9, 1.5).asDiagonal();
  m.topRightCorner<3, 1>() = Eigen::Vector3d(20, -5, 3);
  return m;
}

// Smooth blobs plus a little noise, intensities in the hundreds (the flat-window rule and the
// centring matter), and a flat region (the fixed image is constant where x < 4).
struct DenseCase {
  Eigen::Matrix4d v2w;
  std::vector<float> fixed, moving, mask;
  explicit DenseCase(const Eigen::Matrix4d& grid) : v2w(grid) {
    std::mt19937 rng(7);
    std::normal_distribution<float> noise(0.f, 2.f);
    for (std::size_t i = 0; i < kVoxels; ++i) {
      const double x = double(i % kNx), y = double(i / kNx % kNy), z = double(i / (kNx * kNy));
      const double f = 300 + 100 * std::exp(-((x - 15) * (x - 15) + (y - 12) * (y - 12) + (z - 10) * (z - 10)) / 60) +
                       60 * std::sin(0.3 * x + 0.2 * y) * std::cos(0.25 * z);
      const double m = 250 + 90 * std::exp(-((x - 16) * (x - 16) + (y - 13) * (y - 13) + (z - 11) * (z - 11)) / 55) +
                       50 * std::sin(0.28 * x + 0.22 * y + 0.1) * std::cos(0.24 * z);
      fixed.push_back(x < 4 ? 300.f : float(f) + noise(rng));
      moving.push_back(float(m) + noise(rng));
      const double r2 = (x - 18) * (x - 18) + (y - 15) * (y - 15) + (z - 13) * (z - 13);
      mask.push_back(r2 < 110 ? (r2 < 50 ? 1.f : 0.5f) : (r2 < 130 ? -1.f : 0.f));  // > 0 counts
    }
  }
  rp_dense_cost_request request(bool masked, double* cost, float* gradient) const {
    regpipe_common::FieldGeometry grid{{int(kNx), int(kNy), int(kNz)}, {}};
    for (int k = 0; k < 16; ++k) grid.voxel_to_world[k] = v2w(k / 4, k % 4);
    return regpipe_common::dense_cost_request(
        grid, {fixed.data(), moving.data(), masked ? mask.data() : nullptr, cost, gradient});
  }
};

struct DenseResult {
  double cost = 0;
  std::vector<float> gradient = std::vector<float>(3 * kVoxels);
};

#ifdef REGPIPE_TESTS_WITH_CUDA
// The request's images copied to device 0, its gradient written there and copied back.
DenseResult evaluate_on_device(CostInstance& cost, rp_dense_cost_request r) {
  DenseResult out;
  const std::size_t bytes = kVoxels * sizeof(float);
  float *fixed = nullptr, *moving = nullptr, *mask = nullptr, *gradient = nullptr;
  EXPECT_EQ(cudaMalloc(&fixed, bytes), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&moving, bytes), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&gradient, 3 * bytes), cudaSuccess);
  cudaMemcpy(fixed, r.fixed, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(moving, r.moving, bytes, cudaMemcpyHostToDevice);
  if (r.fixed_mask != nullptr) {
    EXPECT_EQ(cudaMalloc(&mask, bytes), cudaSuccess);
    cudaMemcpy(mask, r.fixed_mask, bytes, cudaMemcpyHostToDevice);
  }
  r.memory = RP_MEMORY_DEVICE;
  r.device = 0;
  r.fixed = fixed;
  r.moving = moving;
  r.fixed_mask = mask;
  r.gradient_out = gradient;
  r.cost_out = &out.cost;
  try {
    cost.evaluate_dense(r);
  } catch (...) {
    cudaFree(fixed), cudaFree(moving), cudaFree(mask), cudaFree(gradient);
    throw;
  }
  EXPECT_EQ(cudaMemcpy(out.gradient.data(), gradient, 3 * bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(fixed), cudaFree(moving), cudaFree(mask), cudaFree(gradient);
  return out;
}
#endif

void expect_same(const DenseResult& cpu, const DenseResult& gpu, const std::string& what) {
  EXPECT_NE(cpu.cost, 0.0) << what;
  EXPECT_LE(std::fabs(gpu.cost - cpu.cost), 1e-9 * std::fabs(cpu.cost))
      << what << ": gpu " << gpu.cost << " cpu " << cpu.cost;
  double largest = 0, worst = 0;
  std::size_t worst_at = 0;
  for (float g : cpu.gradient) largest = std::max(largest, double(std::fabs(g)));
  for (std::size_t i = 0; i < cpu.gradient.size(); ++i) {
    const double d = std::fabs(double(gpu.gradient[i]) - double(cpu.gradient[i]));
    if (d > worst) worst = d, worst_at = i;
  }
  EXPECT_GT(largest, 0.0) << what;
  EXPECT_LE(worst, 1e-5 * largest) << what << ": gradient component " << worst_at << " gpu "
                                   << gpu.gradient[worst_at] << " cpu " << cpu.gradient[worst_at];
}

struct Variant {
  const char* scheme;
  const char* gradient;
};

class CudaLccDense : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
};

}  // namespace

TEST_P(CudaLccDense, AgreesWithCpuLcc) {
  const Variant v = GetParam();
  for (const bool oblique : {true, false}) {
    const DenseCase c(oblique ? oblique_grid() : axis_grid());
    for (const int radius : {1, 2, 4})
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
  const Component* c = fixture().host.find(RP_KIND_COST, "cuda.lcc");
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
  if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  DenseCase c(axis_grid());
  c.moving[123] = std::nanf("");
  auto gpu = make_cost("cuda.lcc", {});
  double cost = 0;
  try {
    gpu->evaluate_dense(c.request(false, &cost, nullptr));
    FAIL() << "accepted a NaN";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("moving voxel 123 is not finite"), std::string::npos) << e.what();
  }
#ifdef REGPIPE_TESTS_WITH_CUDA
  try {
    evaluate_on_device(*gpu, c.request(false, nullptr, nullptr));
    FAIL() << "accepted a NaN in device memory";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("moving voxel 123 is not finite"), std::string::npos) << e.what();
  }
#endif
  c.moving[123] = 1.f;
  auto r = c.request(false, &cost, nullptr);
  r.voxel_to_world[0] = r.voxel_to_world[4] = r.voxel_to_world[8] = 0;  // axis 0 is zero
  EXPECT_THROW(gpu->evaluate_dense(r), ComponentError);
}

TEST(CudaLcc, AffineEvaluateAgreesWithCpuLcc) {
  if (const std::string why = gpu_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const DenseCase c(oblique_grid());
  Image ref, mov, ref_weight, mov_weight;
  ref.dims = mov.dims = {kNx, kNy, kNz};
  ref.voxel_to_world = c.v2w;
  mov.voxel_to_world = axis_grid();  // another grid: a real resampling
  ref.data = c.fixed;
  mov.data = c.moving;
  ref_weight = ref;
  mov_weight = mov;
  for (std::size_t i = 0; i < kVoxels; ++i) {
    ref_weight.data[i] = std::max(0.f, c.mask[i]);
    mov_weight.data[i] = 0.3f + 0.7f * float(i % kNx) / float(kNx - 1);
  }
  // The two grids overlap in part; transforms about that.
  std::vector<double> matrices;
  const Eigen::Vector3d ref_centre = (c.v2w * Eigen::Vector4d(kNx / 2.0, kNy / 2.0, kNz / 2.0, 1)).head<3>();
  const Eigen::Vector3d mov_centre = (axis_grid() * Eigen::Vector4d(kNx / 2.0, kNy / 2.0, kNz / 2.0, 1)).head<3>();
  for (int t = 0; t < 5; ++t) {
    Eigen::Affine3d a = Eigen::Translation3d(mov_centre + Eigen::Vector3d(t - 2.0, 0.5 * t, -0.3 * t)) *
                        Eigen::AngleAxisd(0.05 * t, Eigen::Vector3d(0.3, 1, 0.2).normalized()) *
                        Eigen::Scaling(1.0 + 0.02 * (t - 2)) * Eigen::Translation3d(-ref_centre);
    for (int k = 0; k < 16; ++k) matrices.push_back(a.matrix()(k / 4, k % 4));
  }
  const std::size_t k = matrices.size() / 16;
  for (const bool weighted : {false, true})
    for (const char* scheme : {"separable", "luo"})
      for (const int radius : {1, 2, 4}) {
        auto cpu = make_cost("cpu.lcc", {{"radius", std::to_string(radius)}});
        auto gpu = make_cost("cuda.lcc", {{"radius", std::to_string(radius)}, {"scheme", scheme}});
        for (CostInstance* cost : {cpu.get(), gpu.get()}) {
          cost->set_reference(ref, weighted ? &ref_weight : nullptr);
          cost->set_moving(mov, weighted ? &mov_weight : nullptr);
        }
        std::vector<double> expected(k), expected_overlap(k), got(k), got_overlap(k);
        cpu->evaluate(matrices.data(), k, expected.data(), expected_overlap.data());
        gpu->evaluate(matrices.data(), k, got.data(), got_overlap.data());
        for (std::size_t t = 0; t < k; ++t) {
          EXPECT_NE(expected[t], 0.0) << "transform " << t << " leaves no overlap: fix the test";
          EXPECT_LE(std::fabs(got[t] - expected[t]), 1e-9 * std::fabs(expected[t]))
              << scheme << " radius " << radius << (weighted ? " weighted" : "") << " transform " << t << ": gpu "
              << got[t] << " cpu " << expected[t];
          EXPECT_NEAR(got_overlap[t], expected_overlap[t], 1e-12) << scheme << " transform " << t;
        }
        // One at a time equals batched.
        double single = 0;
        gpu->evaluate(matrices.data() + 16, 1, &single);
        EXPECT_EQ(single, got[1]);
      }
}
