// resample.cpu through the host API: exact reproduction where the interpolation theory says
// so (identity, integer shifts, constants, linear ramps), trilinear against a textbook
// reference, the Gaussian prefilter's mean and variance, backgrounds and refusals.
#include "support/test_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>
#include <regpipe_common/resample_request.hpp>

#include <Eigen/Geometry>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using Mat4 = Eigen::Matrix<double, 4, 4, Eigen::RowMajor>;  // abi.h's row-major layout
using Dims = std::array<uint32_t, 3>;

constexpr int kAllInterpolations[] = {RP_INTERP_NEAREST, RP_INTERP_TRILINEAR, RP_INTERP_SINC,
                                      RP_INTERP_BSPLINE};

std::string interpolation_name(int interpolation) {
  switch (interpolation) {
    case RP_INTERP_NEAREST:
      return "Nearest";
    case RP_INTERP_TRILINEAR:
      return "Trilinear";
    case RP_INTERP_SINC:
      return "Sinc";
    default:
      return "BSpline";
  }
}

Mat4 affine(const Eigen::Matrix3d& linear, const Eigen::Vector3d& translation) {
  Mat4 m = Mat4::Identity();
  m.topLeftCorner<3, 3>() = linear;
  m.topRightCorner<3, 1>() = translation;
  return m;
}

Mat4 translation(double x, double y, double z) {
  return affine(Eigen::Matrix3d::Identity(), {x, y, z});
}

// An oblique grid: anisotropic voxels, rotated 20 degrees about a tilted axis, offset origin.
Mat4 oblique_grid(const Eigen::Vector3d& spacing) {
  const Eigen::Matrix3d r =
      Eigen::AngleAxisd(20.0 * M_PI / 180.0, Eigen::Vector3d(1, 2, 3).normalized()).matrix();
  return affine(r * spacing.asDiagonal(), {-12.5, 30.25, 7.0});
}

struct Volume {
  Dims dims{};
  Mat4 voxel_to_world = Mat4::Identity();
  std::vector<float> data;

  float at(long i, long j, long k) const {
    return data[size_t(i) + dims[0] * (size_t(j) + dims[1] * size_t(k))];
  }
  rp_image view() const {
    rp_image v{};
    v.size = sizeof(v);
    std::copy(dims.begin(), dims.end(), v.dims);
    std::memcpy(v.voxel_to_world, voxel_to_world.data(), sizeof(v.voxel_to_world));
    v.data = data.data();
    return v;
  }
};

Volume make_volume(const Dims& dims, const Mat4& voxel_to_world,
                   const std::function<float(double, double, double)>& value) {
  Volume v{dims, voxel_to_world, {}};
  v.data.resize(size_t(dims[0]) * dims[1] * dims[2]);
  for (uint32_t k = 0; k < dims[2]; ++k)
    for (uint32_t j = 0; j < dims[1]; ++j)
      for (uint32_t i = 0; i < dims[0]; ++i)
        v.data[i + dims[0] * (j + size_t(dims[1]) * k)] = value(i, j, k);
  return v;
}

Volume random_volume(const Dims& dims, const Mat4& voxel_to_world) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  return make_volume(dims, voxel_to_world, [&](double, double, double) { return u(rng); });
}

const regpipe::Component& resampler() {
  static regpipe::PluginHost host({{regpipe::test::plugin_dir()}, false, false});
  return host.require(RP_KIND_RESAMPLER, "resample.cpu");
}

struct Request {
  const Volume* input = nullptr;
  const Mat4* matrix = nullptr;  // NULL = identity
  Dims out_dims{};
  Mat4 out_voxel_to_world = Mat4::Identity();
  int interpolation = RP_INTERP_TRILINEAR;
  std::array<double, 3> sigma_mm{};
  float background = 0.f;
};

// Output on the same grid as the input.
Request same_grid(const Volume& input, int interpolation) {
  Request r;
  r.input = &input;
  r.out_dims = input.dims;
  r.out_voxel_to_world = input.voxel_to_world;
  r.interpolation = interpolation;
  return r;
}

rp_resample_request abi_request(const Request& r, const rp_image& input, float* out) {
  rp_resample_request q{};
  q.size = sizeof(q);
  q.input = &input;
  q.matrix = r.matrix != nullptr ? r.matrix->data() : nullptr;
  std::copy(r.out_dims.begin(), r.out_dims.end(), q.out_dims);
  std::memcpy(q.out_voxel_to_world, r.out_voxel_to_world.data(), sizeof(q.out_voxel_to_world));
  q.out_data = out;
  q.interpolation = r.interpolation;
  std::copy(r.sigma_mm.begin(), r.sigma_mm.end(), q.prefilter_sigma_mm);
  q.background = r.background;
  return q;
}

std::vector<float> resample(const Request& r,
                            const std::map<std::string, std::string>& params = {}) {
  regpipe::HostServices services;
  regpipe::ResamplerInstance instance(resampler(), services,
                                      regpipe::resolve_params(resampler(), params));
  std::vector<float> out(size_t(r.out_dims[0]) * r.out_dims[1] * r.out_dims[2], NAN);
  const rp_image input = r.input->view();
  instance.resample(abi_request(r, input, out.data()));
  return out;
}

// Position of output voxel (i, j, k) in input voxel coordinates, computed independently of
// the plugin: inv(input voxel_to_world) * matrix * output voxel_to_world.
Eigen::Vector3d input_position(const Request& r, double i, double j, double k) {
  const Mat4 m = r.matrix != nullptr ? *r.matrix : Mat4::Identity();
  const Eigen::Vector4d p =
      r.input->voxel_to_world.inverse() * m * r.out_voxel_to_world * Eigen::Vector4d(i, j, k, 1);
  return p.head<3>();
}

// Calls `check(i, j, k, position, value)` for every output voxel.
void for_each_output(
    const Request& r, const std::vector<float>& out,
    const std::function<void(uint32_t, uint32_t, uint32_t, const Eigen::Vector3d&, float)>& check) {
  for (uint32_t k = 0; k < r.out_dims[2]; ++k)
    for (uint32_t j = 0; j < r.out_dims[1]; ++j)
      for (uint32_t i = 0; i < r.out_dims[0]; ++i)
        check(i, j, k, input_position(r, i, j, k),
              out[i + r.out_dims[0] * (j + size_t(r.out_dims[1]) * k)]);
}

// Textbook trilinear interpolation in double, for points inside [0, n-1]^3.
double reference_trilinear(const Volume& v, const Eigen::Vector3d& p) {
  double value = 0.0;
  const long x0 = long(std::floor(p.x())), y0 = long(std::floor(p.y())),
             z0 = long(std::floor(p.z()));
  for (int c = 0; c < 8; ++c) {
    const long x = std::min<long>(x0 + (c & 1), v.dims[0] - 1);
    const long y = std::min<long>(y0 + ((c >> 1) & 1), v.dims[1] - 1);
    const long z = std::min<long>(z0 + ((c >> 2) & 1), v.dims[2] - 1);
    const double wx = (c & 1) ? p.x() - x0 : 1.0 - (p.x() - x0);
    const double wy = ((c >> 1) & 1) ? p.y() - y0 : 1.0 - (p.y() - y0);
    const double wz = ((c >> 2) & 1) ? p.z() - z0 : 1.0 - (p.z() - z0);
    value += wx * wy * wz * v.at(x, y, z);
  }
  return value;
}

// Distance of a position to the nearest face of the sampling domain [0, n-1]^3 (negative
// outside).
double depth_inside(const Volume& v, const Eigen::Vector3d& p) {
  double d = HUGE_VAL;
  for (int a = 0; a < 3; ++a) d = std::min({d, p[a], double(v.dims[a] - 1) - p[a]});
  return d;
}

// A general affine (rotation, anisotropic scale, shear, a small shift) about the centre of
// `in`, so that output voxels land at arbitrary, non-grid positions while most stay inside.
Mat4 general_matrix(const Volume& in) {
  Eigen::Matrix3d shear = Eigen::Matrix3d::Identity();
  shear(0, 1) = 0.07;
  shear(1, 2) = -0.05;
  const Eigen::Matrix3d linear =
      Eigen::AngleAxisd(0.3, Eigen::Vector3d(0.2, -1, 0.5).normalized()).matrix() *
      Eigen::Vector3d(1.06, 0.95, 1.02).asDiagonal() * shear;
  const Eigen::Vector4d centre =
      in.voxel_to_world *
      Eigen::Vector4d((in.dims[0] - 1) / 2.0, (in.dims[1] - 1) / 2.0, (in.dims[2] - 1) / 2.0, 1.0);
  const Eigen::Vector3d c = centre.head<3>();
  return affine(linear, c - linear * c + Eigen::Vector3d(0.3, -0.7, 0.4));
}

class ResampleEveryInterpolation : public ::testing::TestWithParam<int> {};

TEST_P(ResampleEveryInterpolation, IdentityReproducesTheImage) {
  const Volume in = random_volume({11, 9, 7}, oblique_grid({1.1, 0.9, 2.3}));
  const std::vector<float> out = resample(same_grid(in, GetParam()));
  // Every kernel is interpolating: at grid points it returns the sample (B-spline up to the
  // rounding of its double coefficients to a float output).
  for (size_t i = 0; i < in.data.size(); ++i) ASSERT_NEAR(out[i], in.data[i], 1e-4) << i;
}

TEST_P(ResampleEveryInterpolation, FlatImageIsReproduced) {
  const Volume in = random_volume({6, 5, 1}, oblique_grid({1.0, 1.0, 3.0}));
  const std::vector<float> out = resample(same_grid(in, GetParam()));
  for (size_t i = 0; i < in.data.size(); ++i) ASSERT_NEAR(out[i], in.data[i], 1e-4) << i;
}

TEST_P(ResampleEveryInterpolation, IntegerVoxelShiftMovesDataExactly) {
  const Volume in = random_volume(
      {10, 8, 6}, affine(Eigen::Vector3d(1.5, 2.0, 1.0).asDiagonal(), {4.0, -3.0, 2.5}));
  const Mat4 shift = translation(2 * 1.5, -1 * 2.0, 3 * 1.0);  // (+2, -1, +3) voxels
  Request r = same_grid(in, GetParam());
  r.matrix = &shift;
  r.background = -7.f;
  const std::vector<float> out = resample(r);
  for (uint32_t k = 0; k < 6; ++k)
    for (uint32_t j = 0; j < 8; ++j)
      for (uint32_t i = 0; i < 10; ++i) {
        const float got = out[i + 10 * (j + 8 * k)];
        const long si = long(i) + 2, sj = long(j) - 1, sk = long(k) + 3;
        if (si < 10 && sj >= 0 && sk < 6)
          ASSERT_NEAR(got, in.at(si, sj, sk), 1e-4) << i << "," << j << "," << k;
        else
          ASSERT_EQ(got, -7.f) << i << "," << j << "," << k;
      }
}

TEST_P(ResampleEveryInterpolation, ConstantIsReproducedAtArbitraryPoints) {
  // Each kernel's weights sum to 1 (sinc's by normalisation, B-spline's by partition of unity
  // and the filter's gain), edges included.
  const Volume in = make_volume({9, 8, 7}, oblique_grid({1.0, 1.2, 1.4}),
                                [](double, double, double) { return 3.25f; });
  const Mat4 m = general_matrix(in);
  Request r = same_grid(in, GetParam());
  r.matrix = &m;
  r.background = -1.f;
  size_t inside = 0;
  for_each_output(r, resample(r),
                  [&](uint32_t, uint32_t, uint32_t, const Eigen::Vector3d& p, float value) {
                    if (std::fabs(depth_inside(in, p)) < 1e-4)
                      return;  // float rounding decides these
                    if (depth_inside(in, p) > 0) {
                      ++inside;
                      ASSERT_NEAR(value, 3.25f, 1e-5);
                    } else {
                      ASSERT_EQ(value, -1.f);
                    }
                  });
  EXPECT_GT(inside, in.data.size() / 4) << "the transform should keep much of the image";
}

INSTANTIATE_TEST_SUITE_P(Interpolation, ResampleEveryInterpolation,
                         ::testing::ValuesIn(kAllInterpolations),
                         [](const auto& info) { return interpolation_name(info.param); });

TEST(ResampleTrilinear, MatchesTheTextbookFormulaAtArbitraryPoints) {
  const Volume in = random_volume({12, 10, 9}, oblique_grid({1.0, 1.3, 0.8}));
  const Mat4 m = general_matrix(in);
  Request r;
  r.input = &in;
  r.matrix = &m;
  r.out_dims = {14, 11, 8};
  r.out_voxel_to_world = oblique_grid({0.8, 0.9, 1.1});
  r.background = -2.f;
  size_t inside = 0;
  for_each_output(r, resample(r),
                  [&](uint32_t i, uint32_t j, uint32_t k, const Eigen::Vector3d& p, float value) {
                    if (std::fabs(depth_inside(in, p)) < 1e-4) return;
                    if (depth_inside(in, p) > 0) {
                      ++inside;
                      // The plugin samples at float positions (as the costs do): 1e-6 voxels of
                      // position times gradients below 1 per voxel, plus float rounding of the
                      // result.
                      ASSERT_NEAR(value, reference_trilinear(in, p), 2e-6)
                          << i << "," << j << "," << k;
                    } else {
                      ASSERT_EQ(value, -2.f) << i << "," << j << "," << k;
                    }
                  });
  EXPECT_GT(inside, 300u);
}

class ResampleLinearRamp : public ::testing::TestWithParam<int> {};

TEST_P(ResampleLinearRamp, IsReproducedAtArbitraryPoints) {
  // Trilinear and cubic B-splines reproduce linear functions exactly. For the B-spline the
  // mirror boundary bends a ramp near the edges (the mirrored ramp has a kink there, whose
  // influence decays by |sqrt(3) - 2| ~ 0.27 per voxel: 3e-5 at 5 voxels, 2e-6 at 7), so
  // it is checked 7 voxels in.
  auto ramp = [](double x, double y, double z) { return 0.5 + 0.11 * x + 0.07 * y - 0.05 * z; };
  const Volume in = make_volume({24, 22, 20}, oblique_grid({1.0, 1.1, 0.9}),
                                [&](double x, double y, double z) { return float(ramp(x, y, z)); });
  const Mat4 m = general_matrix(in);
  Request r = same_grid(in, GetParam());
  r.matrix = &m;
  const double margin = GetParam() == RP_INTERP_BSPLINE ? 7.0 : 1e-4;
  size_t checked = 0;
  for_each_output(r, resample(r),
                  [&](uint32_t, uint32_t, uint32_t, const Eigen::Vector3d& p, float value) {
                    if (depth_inside(in, p) < margin) return;
                    ++checked;
                    ASSERT_NEAR(value, ramp(p.x(), p.y(), p.z()), 2e-5) << p.transpose();
                  });
  EXPECT_GT(checked, 100u);
}

INSTANTIATE_TEST_SUITE_P(Interpolation, ResampleLinearRamp,
                         ::testing::Values(RP_INTERP_TRILINEAR, RP_INTERP_BSPLINE),
                         [](const auto& info) { return interpolation_name(info.param); });

TEST(ResamplePrefilter, KeepsAConstantImageConstant) {
  const Volume in = make_volume({12, 10, 8}, oblique_grid({1.0, 2.0, 1.5}),
                                [](double, double, double) { return 3.25f; });
  Request r = same_grid(in, RP_INTERP_TRILINEAR);
  r.sigma_mm = {2.0, 3.0, 4.5};
  const std::vector<float> out = resample(r);
  // Edge voxels renormalise over the taps inside, so the mean is kept everywhere.
  for (float v : out) ASSERT_NEAR(v, 3.25f, 1e-5);
}

TEST(ResamplePrefilter, SpreadsADeltaWithTheRequestedSigmaInMillimetres) {
  const Eigen::Vector3d spacing(1.0, 2.0, 1.5);
  const std::array<double, 3> sigma_mm = {2.0, 2.0, 3.0};  // 2, 1 and 2 voxels
  const long c = 12;
  Volume in =
      make_volume({25, 25, 25}, oblique_grid(spacing), [](double, double, double) { return 0.f; });
  in.data[c + 25 * (c + 25 * c)] = 1.f;
  Request r = same_grid(in, RP_INTERP_NEAREST);
  r.sigma_mm = sigma_mm;
  const std::vector<float> out = resample(r);

  double mass = 0.0;
  std::array<double, 3> second_moment_mm2{};
  for (long k = 0; k < 25; ++k)
    for (long j = 0; j < 25; ++j)
      for (long i = 0; i < 25; ++i) {
        const double v = out[i + 25 * (j + 25 * k)];
        mass += v;
        const long offset[3] = {i - c, j - c, k - c};
        for (int a = 0; a < 3; ++a) second_moment_mm2[a] += v * std::pow(offset[a] * spacing[a], 2);
      }
  EXPECT_NEAR(mass, 1.0, 1e-5) << "far from the edges the kernel sums to 1";
  // Truncating at 3 sigma lowers a sampled Gaussian's variance by under 1.7% for sigma >= 1
  // voxel; reading sigma in voxels instead of mm would be off by the spacing squared.
  for (int a = 0; a < 3; ++a) {
    const double variance = second_moment_mm2[a] / mass;
    EXPECT_NEAR(variance / (sigma_mm[a] * sigma_mm[a]), 1.0, 0.025) << "axis " << a;
  }
}

// The prefilter as the voxel-by-voxel loop: every voxel of every line, axis after axis, its
// taps summed in ascending order and renormalised over those inside the line.
Volume reference_smooth(const Volume& in, const std::array<double, 3>& sigma_mm) {
  Volume out = in;
  const rp_image view = in.view();
  const long n[3] = {in.dims[0], in.dims[1], in.dims[2]}, stride[3] = {1, n[0], n[0] * n[1]};
  for (int a = 0; a < 3; ++a) {
    if (!(sigma_mm[a] > 0.0) || n[a] == 1) continue;
    const std::vector<double> w = regpipe_common::gaussian_half_kernel(
        sigma_mm[a] / regpipe_common::axis_spacing(view.voxel_to_world, a), size_t(n[a]));
    const long radius = long(w.size()) - 1;
    const std::vector<float> before = out.data;
    for (long k = 0; k < n[2]; ++k)
      for (long j = 0; j < n[1]; ++j)
        for (long i = 0; i < n[0]; ++i) {
          const long at[3] = {i, j, k}, base = i + n[0] * (j + n[1] * k) - at[a] * stride[a];
          double sum = 0.0, weight = 0.0;
          for (long t = std::max(0L, at[a] - radius); t <= std::min(n[a] - 1, at[a] + radius); ++t) {
            sum += w[size_t(std::labs(t - at[a]))] * before[size_t(base + t * stride[a])];
            weight += w[size_t(std::labs(t - at[a]))];
          }
          out.data[size_t(base + at[a] * stride[a])] = float(sum / weight);
        }
  }
  return out;
}

// What a smoothed resampling `r` must give, bit for bit: its whole input smoothed voxel by voxel
// (reference_smooth), then resampled without a prefilter.
std::vector<float> smoothed_then_resampled(const Request& r) {
  const Volume smoothed = reference_smooth(*r.input, r.sigma_mm);
  Request unfiltered = r;
  unfiltered.input = &smoothed;
  unfiltered.sigma_mm = {};
  return resample(unfiltered);
}

void expect_same_bits(const std::vector<float>& out, const std::vector<float>& expected, const std::string& name) {
  ASSERT_EQ(out.size(), expected.size()) << name;
  EXPECT_EQ(std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)), 0) << name;
}

// The prefilter's lines are summed tap by tap over many voxels at once; each voxel's sum must
// still be the voxel-by-voxel sum in ascending tap order, bit for bit (pyramids, and so every
// registration, are unchanged by it). Lines both longer and shorter than the kernel.
TEST(ResamplePrefilter, EqualsTheVoxelByVoxelSumBitwise) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> value(-50.f, 300.f);
  Volume in = make_volume({41, 9, 23}, oblique_grid({0.9, 1.2, 1.0}),
                          [](double, double, double) { return 0.f; });
  for (float& v : in.data) v = value(rng);
  Request r = same_grid(in, RP_INTERP_NEAREST);
  r.sigma_mm = {3.0, 4.0, 2.5};
  const std::vector<float> out = resample(r);
  expect_same_bits(out, reference_smooth(in, r.sigma_mm).data, "same grid");
  EXPECT_NE(out[100], in.data[100]);  // the filter did smooth
}

// A pyramid level reads a few planes of the smoothed image, and only those are smoothed; each
// level must still be the whole smoothed image sampled, bit for bit: levels of 2 to 8 voxels
// centred as pyramid.cpp centres them, an odd offset, and a rotated grid that reads everywhere.
TEST(ResamplePrefilter, SmoothsOnlyThePlanesALevelReadsBitForBit) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-50.f, 300.f);
  const Eigen::Vector3d spacing(1.0, 1.1, 0.9);
  Volume in = make_volume({47, 38, 29}, oblique_grid(spacing), [](double, double, double) { return 0.f; });
  for (float& v : in.data) v = value(rng);
  const Mat4 rotated = general_matrix(in);
  struct Level {
    double step;          // output voxel / input voxel, every axis
    double extra_offset;  // input voxels, added to the centring
    const Mat4* matrix;
  };
  for (const Level level : {Level{2, 0, nullptr}, Level{3, 0, nullptr}, Level{4, 0, nullptr}, Level{8, 0, nullptr},
                            Level{4, 0.37, nullptr}, Level{2, 0, &rotated}}) {
    for (const int interpolation : {RP_INTERP_NEAREST, RP_INTERP_TRILINEAR}) {
      Request r;
      r.input = &in;
      r.matrix = level.matrix;
      r.interpolation = interpolation;
      Mat4 grid = Mat4::Identity();
      for (int a = 0; a < 3; ++a) {
        const double length = in.dims[a] - 1.0;
        r.out_dims[a] = uint32_t(std::floor(length / level.step)) + 1;
        grid(a, a) = level.step;
        grid(a, 3) = 0.5 * (length - level.step * (r.out_dims[a] - 1)) + level.extra_offset;
        const double level_mm = level.step * spacing[a];
        r.sigma_mm[a] = std::sqrt(level_mm * level_mm - spacing[a] * spacing[a]) / 2.3548200450309493;
      }
      r.out_voxel_to_world = in.voxel_to_world * grid;
      const std::vector<float> out = resample(r);

      const std::string name = interpolation_name(interpolation) + " level " + std::to_string(level.step);
      expect_same_bits(out, smoothed_then_resampled(r), name);
      EXPECT_GT(std::count_if(out.begin(), out.end(), [](float v) { return v != 0.f; }), long(out.size() / 4)) << name;
    }
  }
}

// The smoothing reads its first pass from the input and writes only what the level reads: with
// one axis smoothed (the others' sigma 0, or a single plane), each level is the whole smoothed
// image sampled, bit for bit; with nothing to smooth (sigma only along a single plane's axis),
// the level is the input's.
TEST(ResamplePrefilter, LevelsWithAxesLeftUnsmoothedAreBitForBit) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> value(-50.f, 300.f);
  for (const auto& [dims, sigma_mm] : {std::pair{Dims{23, 19, 1}, std::array<double, 3>{2.0, 0.0, 3.0}},
                                       std::pair{Dims{17, 21, 13}, std::array<double, 3>{0.0, 2.5, 0.0}},
                                       std::pair{Dims{15, 11, 1}, std::array<double, 3>{0.0, 0.0, 2.0}}}) {
    Volume in = make_volume(dims, oblique_grid({1.0, 1.1, 0.9}), [](double, double, double) { return 0.f; });
    for (float& v : in.data) v = value(rng);
    Request r = same_grid(in, RP_INTERP_TRILINEAR);
    r.sigma_mm = sigma_mm;
    Mat4 grid = Mat4::Identity();
    for (int a = 0; a < 3; ++a) {
      r.out_dims[a] = dims[a] == 1 ? 1 : (dims[a] - 1) / 3 + 1;  // a 3-voxel level
      grid(a, a) = dims[a] == 1 ? 1.0 : 3.0;
    }
    r.out_voxel_to_world = in.voxel_to_world * grid;
    const std::vector<float> out = resample(r);
    expect_same_bits(out, smoothed_then_resampled(r), "dims[0] " + std::to_string(dims[0]));
    Request unsmoothed = r;
    unsmoothed.sigma_mm = {};
    EXPECT_EQ(resample(unsmoothed) == out, sigma_mm[0] == 0.0 && sigma_mm[1] == 0.0);  // only the last smooths nothing
  }
}

TEST(Resample, MapsEverythingOutsideToTheBackground) {
  const Volume in = random_volume({8, 8, 8}, oblique_grid({1.0, 1.0, 1.0}));
  const Mat4 far = translation(500.0, 0.0, 0.0);
  for (int interpolation : kAllInterpolations) {
    Request r = same_grid(in, interpolation);
    r.matrix = &far;
    r.background = 42.f;
    for (float v : resample(r)) ASSERT_EQ(v, 42.f) << interpolation_name(interpolation);
  }
}

TEST(Resample, ResultDoesNotDependOnTheThreadCount) {
  const Volume in = random_volume({13, 11, 9}, oblique_grid({1.0, 1.0, 1.0}));
  const Mat4 m = general_matrix(in);
  Request r = same_grid(in, RP_INTERP_BSPLINE);
  r.matrix = &m;
  r.sigma_mm = {1.5, 1.5, 1.5};
  EXPECT_EQ(resample(r, {{"threads", "1"}}), resample(r, {{"threads", "3"}}));
}

TEST(Resample, StopsWhenTheHostCancels) {
  const Volume in = random_volume({8, 8, 8}, oblique_grid({1.0, 1.0, 1.0}));
  regpipe::HostServices services;
  services.request_cancel();
  regpipe::ResamplerInstance instance(resampler(), services,
                                      regpipe::resolve_params(resampler(), {}));
  std::vector<float> out(in.data.size());
  const rp_image input = in.view();
  try {
    instance.resample(abi_request(same_grid(in, RP_INTERP_TRILINEAR), input, out.data()));
    FAIL() << "resample ignored the cancellation";
  } catch (const regpipe::ComponentError& e) {
    EXPECT_EQ(e.status(), RP_CANCELLED);
  }
}

struct BadRequest {
  std::string name;
  std::function<void(rp_resample_request&, rp_image&)> spoil;
  rp_status status;
  std::string message;  // expected part of the error
};
void PrintTo(const BadRequest& r, std::ostream* os) { *os << r.name; }

class ResampleRefuses : public ::testing::TestWithParam<BadRequest> {};

TEST_P(ResampleRefuses, WithTheDocumentedStatusAndANamedValue) {
  const Volume in = random_volume({6, 5, 4}, oblique_grid({1.0, 1.0, 1.0}));
  rp_image input = in.view();
  std::vector<float> out(6 * 5 * 4, -3.f);
  rp_resample_request q = abi_request(same_grid(in, RP_INTERP_TRILINEAR), input, out.data());
  GetParam().spoil(q, input);
  regpipe::HostServices services;
  regpipe::ResamplerInstance instance(resampler(), services,
                                      regpipe::resolve_params(resampler(), {}));
  try {
    instance.resample(q);
    FAIL() << "accepted " << GetParam().name;
  } catch (const regpipe::ComponentError& e) {
    EXPECT_EQ(e.status(), GetParam().status) << e.what();
    EXPECT_NE(std::string(e.what()).find(GetParam().message), std::string::npos) << e.what();
  }
  for (float v : out) ASSERT_EQ(v, -3.f) << "refused requests must not touch the output";
}

const double kSingularMatrix[16] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
const double kProjectiveMatrix[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1};
const double kNanMatrix[16] = {1, 0, 0, NAN, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

INSTANTIATE_TEST_SUITE_P(
    BadRequests, ResampleRefuses,
    ::testing::Values(
        BadRequest{"ZeroInputDimension", [](auto&, auto& in) { in.dims[0] = 0; },
                   RP_INVALID_ARGUMENT, "input dims=0x5x4"},
        BadRequest{"ZeroOutputDimension", [](auto& q, auto&) { q.out_dims[2] = 0; },
                   RP_INVALID_ARGUMENT, "out_dims=6x5x0"},
        BadRequest{"NullInputData", [](auto&, auto& in) { in.data = nullptr; }, RP_INVALID_ARGUMENT,
                   "input image data is NULL"},
        BadRequest{"SingularMatrix", [](auto& q, auto&) { q.matrix = kSingularMatrix; },
                   RP_INVALID_ARGUMENT, "matrix is singular"},
        BadRequest{"SingularInputGrid",
                   [](auto&, auto& in) { std::copy_n(kSingularMatrix, 16, in.voxel_to_world); },
                   RP_INVALID_ARGUMENT, "input voxel_to_world is singular"},
        BadRequest{"SingularOutputGrid",
                   [](auto& q, auto&) { std::copy_n(kSingularMatrix, 16, q.out_voxel_to_world); },
                   RP_INVALID_ARGUMENT, "out_voxel_to_world is singular"},
        BadRequest{"ProjectiveMatrix", [](auto& q, auto&) { q.matrix = kProjectiveMatrix; },
                   RP_INVALID_ARGUMENT, "matrix has last row (0, 0, 1, 1)"},
        BadRequest{"NanMatrix", [](auto& q, auto&) { q.matrix = kNanMatrix; }, RP_INVALID_ARGUMENT,
                   "matrix has a non-finite entry (nan) at row 0, column 3"},
        BadRequest{"NegativeSigma", [](auto& q, auto&) { q.prefilter_sigma_mm[1] = -1.0; },
                   RP_INVALID_ARGUMENT, "prefilter_sigma_mm[1]=-1"},
        BadRequest{"UnknownInterpolation", [](auto& q, auto&) { q.interpolation = 7; },
                   RP_UNSUPPORTED, "interpolation=7 is not offered"},
        BadRequest{"OldRequestSize", [](auto& q, auto&) { q.size = 8; }, RP_INVALID_ARGUMENT,
                   "resample request size=8"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
