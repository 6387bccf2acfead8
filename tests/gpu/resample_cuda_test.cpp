// resample.cuda against resample.cpu (label gpu: skipped without a CUDA device, except the
// device-index error path). The plugin is compiled without FMA contraction, so the prefilter,
// nearest and trilinear must agree bit for bit; sinc and B-spline within the libm
// difference; texture
// trilinear within its 8-bit weights.
#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform.hpp>

#include "support/test_support.hpp"

#include <algorithm>
#include <cmath>
#include <random>

using namespace regpipe;

namespace {

PluginHost& host() {
  static PluginHost h{test::built_plugins()};
  return h;
}

HostServices& services() {
  static HostServices s;
  return s;
}

std::unique_ptr<ResamplerInstance> make_resampler(const std::string& id,
                                                  const std::map<std::string, std::string>& params = {}) {
  const Component& c = host().require(RP_KIND_RESAMPLER, id);
  return std::make_unique<ResamplerInstance>(c, services(), resolve_params(c, params));
}

// A smooth blob plus noise on an anisotropic, oblique grid: every code path sees fractions.
Image test_image(unsigned seed) {
  Image image;
  image.dims = {61, 53, 37};
  image.voxel_to_world = params_to_matrix({0.1, -0.2, 0.15, 3, -5, 7, 1.1, 0.9, 1.4, 0, 0, 0},
                                          Eigen::Vector3d::Zero());
  image.data.resize(image.voxel_count());
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 5.f);
  for (uint32_t z = 0; z < image.dims[2]; ++z)
    for (uint32_t y = 0; y < image.dims[1]; ++y)
      for (uint32_t x = 0; x < image.dims[0]; ++x) {
        const double r2 = std::pow(x - 30.0, 2) + std::pow(y - 25.0, 2) + std::pow(z - 18.0, 2);
        image.data[x + image.dims[0] * (y + image.dims[1] * size_t(z))] =
            float(100.0 * std::exp(-r2 / 200.0)) + noise(rng);
      }
  return image;
}

struct Case {
  const char* name;
  int32_t interpolation;
  double sigma_mm;
  bool transformed;  // a rotation, scale and shift between output and input world
};

// The output: a grid of other spacing and orientation over the input's field of view.
std::vector<float> resample_with(ResamplerInstance& r, const Image& in, const Case& c) {
  const Image grid = level_grid(in, 1.7);
  std::vector<float> out(grid.voxel_count(), -1.f);
  const rp_image input = in.view();
  const Eigen::Matrix4d m = params_to_matrix({0.2, 0.1, -0.3, 4, -2, 1, 1.05, 0.97, 1.0, 0.02, 0, 0},
                                             centre_of_mass(in));
  double matrix[16], v2w[16];
  for (int i = 0; i < 16; ++i) {
    matrix[i] = m(i / 4, i % 4);
    v2w[i] = grid.voxel_to_world(i / 4, i % 4);
  }
  rp_resample_request q{};
  q.size = sizeof(q);
  q.input = &input;
  q.matrix = c.transformed ? matrix : nullptr;
  for (int a = 0; a < 3; ++a) q.out_dims[a] = grid.dims[a];
  std::copy(v2w, v2w + 16, q.out_voxel_to_world);
  q.out_data = out.data();
  q.interpolation = c.interpolation;
  for (double& s : q.prefilter_sigma_mm) s = c.sigma_mm;
  q.background = -7.f;
  r.resample(q);
  return out;
}

class ResampleCuda : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (const auto why = test::gpu_component_unavailable(host(), RP_KIND_RESAMPLER, "resample.cuda"))
      GTEST_SKIP() << *why;
  }
};

}  // namespace

TEST_P(ResampleCuda, MatchesTheCpuResampler) {
  const Case c = GetParam();
  const Image in = test_image(7);
  const std::vector<float> cpu = resample_with(*make_resampler("resample.cpu"), in, c);
  const std::vector<float> gpu = resample_with(*make_resampler("resample.cuda"), in, c);
  ASSERT_EQ(cpu.size(), gpu.size());
  const size_t background = size_t(std::count(cpu.begin(), cpu.end(), -7.f));
  if (c.transformed) ASSERT_GT(background, 0u) << "the case should reach outside the input";
  ASSERT_LT(background, cpu.size() / 2) << "the case should mostly sample inside the input";
  // Exact arithmetic for prefilter, nearest, trilinear; sinc differs by CUDA's vs glibc's
  // sin/cos and the B-spline filter's start by their log/pow (~1 ulp each, ~1e-6 of the
  // image's range after normalisation).
  const bool libm = c.interpolation == RP_INTERP_SINC || c.interpolation == RP_INTERP_BSPLINE;
  const double tolerance = libm ? 1e-4 : 0.0;
  size_t worst = 0;
  double worst_diff = 0.0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double d = std::fabs(double(cpu[i]) - double(gpu[i]));
    if (d > worst_diff) worst_diff = d, worst = i;
  }
  std::printf("%s: worst |cpu - gpu| = %g at voxel %zu (cpu %g, gpu %g)\n", c.name, worst_diff, worst,
              double(cpu[worst]), double(gpu[worst]));
  EXPECT_LE(worst_diff, tolerance) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Interpolations, ResampleCuda,
    ::testing::Values(Case{"nearest", RP_INTERP_NEAREST, 0.0, true}, Case{"trilinear", RP_INTERP_TRILINEAR, 0.0, true},
                      Case{"pyramid_level", RP_INTERP_TRILINEAR, 2.5, false},
                      Case{"prefiltered_nearest", RP_INTERP_NEAREST, 1.2, true},
                      Case{"sinc", RP_INTERP_SINC, 0.0, true}, Case{"bspline", RP_INTERP_BSPLINE, 0.0, true}),
    [](const auto& info) { return std::string(info.param.name); });

// The texture units interpolate with 8-bit fractions: within 1/256 of the local step per axis.
TEST_F(ResampleCuda, TextureSamplingIsCloseToExactTrilinear) {
  const Image in = test_image(11);
  const Case c{"texture", RP_INTERP_TRILINEAR, 0.0, true};
  const std::vector<float> exact = resample_with(*make_resampler("resample.cuda"), in, c);
  const std::vector<float> texture = resample_with(*make_resampler("resample.cuda", {{"sampling", "texture"}}), in, c);
  const auto [lo, hi] = std::minmax_element(in.data.begin(), in.data.end());
  double worst = 0.0, changed = 0.0;
  for (size_t i = 0; i < exact.size(); ++i) {
    worst = std::max(worst, std::fabs(double(exact[i]) - double(texture[i])));
    changed += exact[i] != texture[i];
  }
  std::printf("texture vs exact: worst %g over an input range of %g; %g of %zu voxels differ\n", worst,
              double(*hi - *lo), changed, exact.size());
  EXPECT_LE(worst, 3.0 / 256.0 * double(*hi - *lo));
  EXPECT_GT(changed, 0.0) << "texture sampling should not be the exact path";
}

// A whole pyramid level of a real image, as the driver builds it.
TEST_F(ResampleCuda, RealImagePyramidLevelsAreBitIdentical) {
  const auto path = test::shared_data("chris_t1.nii.gz");
  if (path.empty()) GTEST_SKIP() << "shared data not found: " << test::shared_data_dir();
  const Image t1 = read_image(path);
  auto cpu = make_resampler("resample.cpu");
  auto gpu = make_resampler("resample.cuda");
  for (double mm : {8.0, 4.0, 2.0, 1.0}) {
    const Image a = make_level(t1, mm, *cpu), b = make_level(t1, mm, *gpu);
    EXPECT_EQ(a.data, b.data) << mm << " mm";
  }
}

// Images larger than the plugin's page-locked staging (16 MB) cross it in rounds of slabs,
// both ways; sizes that no slab count divides. A 1 mm level of a 1 mm image is its own grid.
TEST_F(ResampleCuda, LargeImagesCopiedThroughStagingAreBitIdentical) {
  Image big;
  big.dims = {211, 197, 103};  // 4.28 M voxels: two rounds of a 4 M-float staging
  big.data.resize(big.voxel_count());
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-50.f, 200.f);
  for (float& v : big.data) v = value(rng);
  auto cpu = make_resampler("resample.cpu");
  auto gpu = make_resampler("resample.cuda");
  const uint64_t id = new_input_id();
  for (double mm : {1.0, 1.3, 2.0}) {
    const Image a = make_level(big, mm, *cpu), b = make_level(big, mm, *gpu, id);
    EXPECT_EQ(a.data, b.data) << mm << " mm";
  }
  EXPECT_EQ(make_level(big, 1.0, *gpu, id).data, big.data) << "its own grid, no prefilter";
}

// input_id (ABI 1.1) lets the plugin keep its upload between requests on one image; a new id,
// or the same id on another image, must be read afresh.
TEST_F(ResampleCuda, InputIdReusesTheUploadOnlyForTheSameImage) {
  Image a = test_image(21);
  const Image b = test_image(22);
  auto cpu = make_resampler("resample.cpu");
  auto gpu = make_resampler("resample.cuda");
  const uint64_t id = new_input_id();
  for (double mm : {4.0, 2.0}) EXPECT_EQ(make_level(a, mm, *gpu, id).data, make_level(a, mm, *cpu).data) << mm;
  EXPECT_EQ(make_level(b, 3.0, *gpu, id).data, make_level(b, 3.0, *cpu).data) << "same id, another image";
  for (float& v : a.data) v = 2.f * v + 1.f;  // the caller changes the data: a new id
  EXPECT_EQ(make_level(a, 3.0, *gpu, new_input_id()).data, make_level(a, 3.0, *cpu).data) << "new id";
}

// Runs wherever the plugin is built: no device, or an index that does not exist, is refused
// with the CPU alternative named.
TEST(ResampleCudaDevice, MissingDeviceIsAClearErrorNamingTheCpuAlternative) {
  const Component* c = host().find(RP_KIND_RESAMPLER, "resample.cuda");
  if (c == nullptr) GTEST_SKIP() << "resample.cuda is not built";
  try {
    ResamplerInstance r(*c, services(), resolve_params(*c, {{"device", "63"}}));
    FAIL() << "device 63 should not exist";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_DEVICE);
    EXPECT_NE(std::string(e.what()).find("resample.cpu"), std::string::npos) << e.what();
  }
}
