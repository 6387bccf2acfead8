// The device field operations of SyN's iteration (plugins/common_cuda, device_fields.hpp)
// against their CPU references in regpipe_common/fields/ and syn/syn_update.hpp, on random
// smooth diffeomorphisms (random_smooth_diffeomorphism) over an oblique, anisotropic grid.
// device_fields.cu evaluates each voxel with the reference's own __host__ __device__ formulas
// and without fused multiply-adds, so the results are expected to agree to the last bits; the
// tolerances below leave room for a libm/CUDA ulp (1e-5 mm for fields of a few mm, 1e-5 of
// the range for images, the same iteration count for the inverse). Skipped without a CUDA
// device, and when built without CUDA.
#include <gtest/gtest.h>

#ifdef REGPIPE_TESTS_WITH_CUDA

#include <regpipe_common/fields/composition.hpp>
#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/fields/inverse.hpp>
#include <regpipe_common/fields/random_diffeomorphism.hpp>
#include <regpipe_common/fields/resample_field.hpp>
#include <regpipe_common/fields/warp_image.hpp>
#include <regpipe_common/syn/syn_levels.hpp>
#include <regpipe_common/syn/syn_update.hpp>
#include <regpipe_common_cuda/device_fields.hpp>

#include <regpipe/plugin.hpp>

#include "cuda_stream_fixture.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace regpipe_common;
namespace cuda = regpipe_common_cuda;

constexpr double kFieldToleranceMm = 1e-5;
constexpr double kImageToleranceRelative = 1e-5;

// Spacing 2 x 2.2 x 2.5 mm, rotated 10 degrees about z and 5 about x, origin off-centre.
FieldGeometry oblique_grid(int nx, int ny, int nz, double shift_mm = 0.0) {
  const double a = 10.0 * M_PI / 180.0, b = 5.0 * M_PI / 180.0;
  const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b);
  // R = Rz(a) Rx(b), columns scaled by the spacings
  const double r[3][3] = {{ca, -sa * cb, sa * sb}, {sa, ca * cb, -ca * sb}, {0, sb, cb}};
  const double sp[3] = {2.0, 2.2, 2.5}, origin[3] = {-40 + shift_mm, 30 - shift_mm, -20 + 0.5 * shift_mm};
  FieldGeometry g{{nx, ny, nz}, {}};
  for (int row = 0; row < 3; ++row) {
    for (int col = 0; col < 3; ++col) g.voxel_to_world[4 * row + col] = r[row][col] * sp[col];
    g.voxel_to_world[4 * row + 3] = origin[row];
  }
  g.voxel_to_world[15] = 1.0;
  return g;
}

DisplacementField random_field(const FieldGeometry& g, std::uint64_t seed, double max_mm = 4.0) {
  RandomDiffeomorphismOptions o;
  o.seed = seed;
  o.smoothing_sigma_voxels = 4.0;
  o.max_displacement_mm = max_mm;
  return random_smooth_diffeomorphism(g, o).displacement;
}

// A device copy of host floats, freed with the object.
class DeviceFloats {
 public:
  explicit DeviceFloats(std::size_t n) : n_(n) {
    if (cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(float)) != cudaSuccess) throw std::bad_alloc();
  }
  explicit DeviceFloats(const std::vector<float>& host) : DeviceFloats(host.size()) {
    cudaMemcpy(p_, host.data(), n_ * sizeof(float), cudaMemcpyHostToDevice);
  }
  ~DeviceFloats() { cudaFree(p_); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* get() const { return p_; }
  std::vector<float> download() const {
    std::vector<float> out(n_);
    EXPECT_EQ(cudaMemcpy(out.data(), p_, n_ * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  float* p_ = nullptr;
  std::size_t n_ = 0;
};

// Largest |a - b| per vector (mm) of two fields of the same layout.
double max_vector_difference(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double largest = 0.0;
  for (std::size_t i = 0; i + 2 < std::min(a.size(), b.size()); i += 3) {
    const double dx = double(a[i]) - b[i], dy = double(a[i + 1]) - b[i + 1], dz = double(a[i + 2]) - b[i + 2];
    largest = std::max(largest, std::sqrt(dx * dx + dy * dy + dz * dz));
  }
  return largest;
}

// The figure behind each comparison, for the log (the kernels aim at the reference's bits).
double reported(const std::string& what, double difference) {
  std::printf("  %s: largest difference %.3g\n", what.c_str(), difference);
  return difference;
}

double max_abs(const std::vector<float>& v) {
  double largest = 0.0;
  for (float x : v) largest = std::max(largest, double(std::fabs(x)));
  return largest;
}

class DeviceFields : public regpipe::test::CudaStreamTest {
 protected:
  cuda::FieldScratch scratch_;
};

TEST_F(DeviceFields, ComposeFirstThenSecondEqualsCpu) {
  const FieldGeometry grid = oblique_grid(36, 32, 28);
  const DisplacementField first = random_field(grid, 1);
  // Second on its own grid as well as on first's: the shifted one leaves part of first's
  // grid outside second's, where second is zero.
  for (const FieldGeometry& second_grid : {grid, oblique_grid(30, 34, 24, 9.0)}) {
    const DisplacementField second = random_field(second_grid, 2, 6.0);
    const DisplacementField expected = compose_first_then_second(view_of(first), view_of(second));
    const DeviceFloats d_first(first.vectors), d_second(second.vectors), d_out(first.vectors.size());
    cuda::device_compose_first_then_second(view_of(grid, d_first.get()), view_of(second_grid, d_second.get()),
                                           d_out.get(), stream_);
    sync();
    EXPECT_LE(reported("compose, mm", max_vector_difference(d_out.download(), expected.vectors)), kFieldToleranceMm);
  }
}

TEST_F(DeviceFields, ResampleFieldEqualsCpu) {
  const FieldGeometry full = oblique_grid(40, 36, 30);
  // SyN's level change: from the grid shrunk by 2 onto the full grid, and the other way; and
  // onto a grid reaching beyond the field's, where it is zero.
  const FieldGeometry coarse = syn::shrink_geometry(full, 2);
  const FieldGeometry beyond = oblique_grid(44, 40, 34, -6.0);
  const struct {
    FieldGeometry from, to;
  } cases[] = {{coarse, full}, {full, coarse}, {full, beyond}};
  for (const auto& c : cases) {
    const DisplacementField field = random_field(c.from, 3, 5.0);
    const DisplacementField expected = resample_field(view_of(field), c.to);
    const DeviceFloats d_field(field.vectors), d_out(expected.vectors.size());
    cuda::device_resample_field(view_of(c.from, d_field.get()), c.to, d_out.get(), stream_);
    sync();
    EXPECT_LE(reported("resample, mm", max_vector_difference(d_out.download(), expected.vectors)), kFieldToleranceMm)
        << c.from.dims.nx << " -> " << c.to.dims.nx;
  }
}

TEST_F(DeviceFields, WarpImageEqualsCpu) {
  const FieldGeometry grid = oblique_grid(36, 32, 28);
  // A smooth random image on a grid of its own (1.5 mm, axis-aligned), so the warp crosses grids.
  const Grid mg{56, 50, 44};
  std::vector<float> image(voxel_count(mg));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> noise(0.0f, 1000.0f);
  for (float& v : image) v = noise(rng);
  const double sigma[3] = {2.0, 2.0, 2.0};
  smooth_image_gaussian(image, mg, sigma);
  rp_image moving{sizeof(rp_image), {56, 50, 44}, {1.5, 0, 0, -42, 0, 1.5, 0, -10, 0, 0, 1.5, -25, 0, 0, 0, 1},
                  image.data()};
  const DisplacementField field = random_field(grid, 4, 6.0);
  for (const float background : {0.0f, -7.0f}) {
    const std::vector<float> expected = warp_image(moving, view_of(field), grid, background);
    const DeviceFloats d_image(image), d_field(field.vectors), d_out(expected.size());
    rp_image on_device = moving;
    on_device.data = d_image.get();
    cuda::device_warp_image(on_device, view_of(grid, d_field.get()), grid, background, d_out.get(), stream_);
    sync();
    const std::vector<float> got = d_out.download();
    double worst = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - expected[i]));
    EXPECT_LE(reported("warp, intensity", worst), kImageToleranceRelative * max_abs(expected)) << "background " << background;
    EXPECT_NE(std::count(expected.begin(), expected.end(), background), 0) << "no voxel maps outside";
  }
}

TEST_F(DeviceFields, GaussianSmoothingEqualsCpu) {
  const FieldGeometry grid = oblique_grid(30, 26, 22);
  // Unsmoothed noise: every tap matters.
  DisplacementField noise = zero_field(grid);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (float& c : noise.vectors) c = u(rng);
  for (const double sigma : {0.0, 0.6, 1.5, 3.0, 12.0}) {
    DisplacementField expected = noise;
    smooth_field_gaussian(expected, sigma);
    const DeviceFloats d(noise.vectors);
    cuda::device_smooth_field_gaussian(d.get(), grid, sigma, scratch_, stream_);
    sync();
    EXPECT_LE(reported("smooth sigma " + std::to_string(sigma) + ", mm", max_vector_difference(d.download(), expected.vectors)),
              kFieldToleranceMm);
  }
  // ANTs' smoothing of SyN's update and total fields: the blend below variance 0.5, the border.
  for (const double variance : {0.0, 0.25, 0.5, 3.0}) {
    DisplacementField expected = noise;
    syn::ants_smooth_field(expected, variance);
    const DeviceFloats d(noise.vectors);
    cuda::device_ants_smooth_field(d.get(), grid, variance, scratch_, stream_);
    sync();
    EXPECT_LE(reported("ants smooth variance " + std::to_string(variance) + ", mm",
                       max_vector_difference(d.download(), expected.vectors)),
              kFieldToleranceMm);
  }
  // Images (SyN's per-level smoothing): a sigma per axis, 0 leaving that axis.
  std::vector<float> image(voxel_count(grid.dims));
  for (float& v : image) v = u(rng);
  const double sigmas[][3] = {{0.0, 1.2, 2.5}, {3.0, 3.0, 3.0}, {0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}};
  for (const auto& sigma : sigmas) {
    std::vector<float> expected = image;
    smooth_image_gaussian(expected, grid.dims, sigma);
    const DeviceFloats d(image);
    cuda::device_smooth_image_gaussian(d.get(), grid.dims, sigma, scratch_, stream_);
    sync();
    const std::vector<float> got = d.download();
    double worst = 0.0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - expected[i]));
    EXPECT_LE(reported("image smooth sigma " + std::to_string(sigma[0]) + "," + std::to_string(sigma[1]) + "," +
                           std::to_string(sigma[2]),
                       worst),
              kImageToleranceRelative * max_abs(expected));
  }
  EXPECT_THROW(cuda::device_smooth_field_gaussian(nullptr, grid, -1.0, scratch_, stream_), rp::Error);
}

TEST_F(DeviceFields, InverseEqualsCpuWithTheSameIterations) {
  const FieldGeometry grid = oblique_grid(36, 32, 28);
  const DisplacementField u = random_field(grid, 6, 5.0);
  // The reference's defaults, a tolerance it cannot reach in 20 updates (the count decides),
  // and SyN's per-iteration options (max and mean tolerances, at least one update) from a
  // warm start.
  InverseOptions defaults;
  InverseOptions unreachable;
  unreachable.max_residual_mm = 0.0;
  unreachable.max_iterations = 7;
  InverseOptions syn_like;
  syn_like.max_iterations = 20;
  syn_like.max_residual_mm = 0.1 * 2.0;
  syn_like.mean_residual_mm = 0.001 * 2.0;
  syn_like.min_iterations = 1;
  const InverseResult rough = invert_displacement_field(view_of(u), unreachable);
  const DeviceFloats d_u(u.vectors);
  const DisplacementFieldView du = view_of(grid, d_u.get());
  const struct {
    const char* name;
    InverseOptions options;
    const DisplacementField* warm;
  } cases[] = {{"defaults", defaults, nullptr}, {"unreachable", unreachable, nullptr},
               {"syn_like warm", syn_like, &rough.inverse}, {"defaults warm", defaults, &rough.inverse}};
  for (const auto& c : cases) {
    const InverseResult expected = invert_displacement_field(view_of(u), c.options, c.warm);
    // Warm starts in place (the output holds the guess), cold ones into a zeroed output.
    const DeviceFloats d_inverse(c.warm ? c.warm->vectors : std::vector<float>(u.vectors.size(), 1.0f));
    const cuda::DeviceInverseResult got = cuda::device_invert_displacement_field(
        du, c.options, c.warm ? d_inverse.get() : nullptr, d_inverse.get(), scratch_, stream_);
    sync();
    EXPECT_EQ(got.iterations, expected.iterations) << c.name;
    EXPECT_EQ(got.converged, expected.converged) << c.name;
    EXPECT_NEAR(got.max_residual_mm, expected.max_residual_mm, 1e-9) << c.name;
    EXPECT_NEAR(got.mean_residual_mm, expected.mean_residual_mm, 1e-9) << c.name;
    std::printf("  inverse %s: %d updates (cpu %d), max residual %.9g mm (cpu %.9g)\n", c.name, got.iterations,
                expected.iterations, got.max_residual_mm, expected.max_residual_mm);
    EXPECT_LE(reported(std::string("inverse ") + c.name + ", mm",
                       max_vector_difference(d_inverse.download(), expected.inverse.vectors)),
              kFieldToleranceMm);
  }
  EXPECT_GT(invert_displacement_field(view_of(u), defaults).iterations, 1) << "the test needs several updates";
  InverseOptions bad;
  bad.max_iterations = -1;
  const DeviceFloats d_out(u.vectors.size());
  EXPECT_THROW(cuda::device_invert_displacement_field(du, bad, nullptr, d_out.get(), scratch_, stream_), rp::Error);
  EXPECT_THROW(cuda::device_invert_displacement_field(du, defaults, nullptr, d_u.get(), scratch_, stream_),
               rp::Error);  // the inverse may not overwrite u
}

TEST_F(DeviceFields, RefusesBadArguments) {
  const FieldGeometry grid = oblique_grid(8, 8, 8);
  const DeviceFloats d(3 * voxel_count(grid.dims));
  const DisplacementFieldView v = view_of(grid, d.get());
  EXPECT_THROW(cuda::device_compose_first_then_second(v, v, d.get(), stream_), rp::Error);  // aliasing
  EXPECT_THROW(cuda::device_resample_field(v, grid, nullptr, stream_), rp::Error);
  FieldGeometry flat = grid;
  flat.dims.nz = 0;
  EXPECT_THROW(cuda::device_resample_field(v, flat, d.get() + 1, stream_), rp::Error);
}

}  // namespace

#else

TEST(DeviceFields, NeedsCuda) { GTEST_SKIP() << "regpipe_gpu_tests was built without CUDA"; }

#endif
