// The dense-gradient costs of common/include/regpipe_common/dense_metrics: the fast
// forms against brute-force window loops, each gradient against a finite difference of its
// cost under a real displacement of the moving image, and the invariants.
#include <regpipe_common/dense_metrics/image_gradient.hpp>
#include <regpipe_common/dense_metrics/local_cc.hpp>
#include <regpipe_common/dense_metrics/mattes_mi.hpp>
#include <regpipe_common/dense_metrics/mean_squares.hpp>
#include "dense_metrics_reference_loops.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace regpipe_common::dense_metrics;
using Point = std::array<double, 3>;  // mm
using Field = std::function<double(const Point&)>;

// Odd sizes and anisotropic spacing so that axes cannot be swapped unnoticed; 9 voxels along
// z so a radius-4 window is clipped on both sides at once.
DenseGrid test_grid() {
  DenseGrid grid;
  grid.dims = {13, 11, 9};
  grid.spacing_mm[0] = 1.0;
  grid.spacing_mm[1] = 1.5;
  grid.spacing_mm[2] = 2.0;
  return grid;
}

Point position_mm(const DenseGrid& grid, std::size_t i) {
  const auto& g = grid.dims;
  return {double(i % g.nx) * grid.spacing_mm[0], double(i / g.nx % g.ny) * grid.spacing_mm[1],
          double(i / (std::size_t(g.nx) * g.ny)) * grid.spacing_mm[2]};
}

std::vector<float> sample(const DenseGrid& grid, const Field& field) {
  std::vector<float> image(regpipe_common::voxel_count(grid.dims));
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = float(field(position_mm(grid, i)));
  return image;
}

std::vector<float> random_image(const DenseGrid& grid, unsigned seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 100.0f);
  std::vector<float> image(regpipe_common::voxel_count(grid.dims));
  for (float& v : image) v = uniform(engine);
  return image;
}

// Smooth fixed and moving images, related but not affinely; the moving one is a function of
// position with a closed-form gradient, so it can be displaced exactly.
double smooth_fixed(const Point& p) { return 50.0 + 20.0 * std::sin(0.31 * p[0] + 0.17 * p[1]) + 10.0 * std::cos(0.23 * p[2] - 0.11 * p[0]); }
double smooth_moving(const Point& p) {
  return 1.0 + 0.6 * std::sin(0.29 * p[0] + 0.19 * p[1] + 0.3) + 0.3 * std::cos(0.21 * p[2] - 0.13 * p[0]) +
         0.2 * std::sin(0.05 * p[0] * p[1] / 4.0 + 0.27 * p[2]);
}
Point smooth_moving_gradient(const Point& p) {
  const double a = std::cos(0.29 * p[0] + 0.19 * p[1] + 0.3), b = -std::sin(0.21 * p[2] - 0.13 * p[0]),
               c = std::cos(0.05 * p[0] * p[1] / 4.0 + 0.27 * p[2]);
  return {0.6 * 0.29 * a - 0.3 * 0.13 * b + 0.2 * c * 0.05 * p[1] / 4.0,
          0.6 * 0.19 * a + 0.2 * c * 0.05 * p[0] / 4.0,
          0.3 * 0.21 * b + 0.2 * c * 0.27};
}

std::vector<float> analytic_gradient(const DenseGrid& grid) {
  std::vector<float> gradient(3 * regpipe_common::voxel_count(grid.dims));
  for (std::size_t i = 0; i < gradient.size() / 3; ++i) {
    const Point g = smooth_moving_gradient(position_mm(grid, i));
    for (int a = 0; a < 3; ++a) gradient[3 * i + a] = float(g[a]);
  }
  return gradient;
}

// A weight with zeros (a hole and a slab), fractions and ones.
std::vector<float> test_weight(const DenseGrid& grid) {
  std::vector<float> weight(regpipe_common::voxel_count(grid.dims));
  for (std::size_t i = 0; i < weight.size(); ++i) {
    const Point p = position_mm(grid, i);
    const bool hole = std::abs(p[0] - 6.0) < 2.5 && std::abs(p[1] - 7.5) < 2.0;
    weight[i] = hole || p[2] > 15.0 ? 0.0f : (i % 3 == 0 ? 0.5f : 1.0f);
  }
  return weight;
}

// The images of one test, owned, and the input that views them.
struct Images {
  DenseGrid grid = test_grid();
  std::vector<float> fixed, moving, weight, moving_gradient;
  DenseCostInput input() const { return {grid, fixed, moving, weight, moving_gradient}; }
};

enum class Content { random, smooth };

Images make_images(Content content, bool weighted) {
  Images im;
  if (content == Content::random) {
    im.fixed = random_image(im.grid, 1);
    im.moving = random_image(im.grid, 2);
    for (std::size_t i = 0; i < im.moving.size(); ++i) im.moving[i] += 0.5f * im.fixed[i];  // some correlation
    im.moving_gradient = central_difference_gradient(im.grid, im.moving);
  } else {
    im.fixed = sample(im.grid, smooth_fixed);
    im.moving = sample(im.grid, smooth_moving);
    im.moving_gradient = analytic_gradient(im.grid);
  }
  if (weighted) im.weight = test_weight(im.grid);
  return im;
}

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// Largest |a - b| relative to the largest |b|.
double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d / max_abs(b);
}

// ---- Local CC: window sums against window loops -------------------------------------------

struct LccCase {
  std::string name;
  LocalWindow window;
  LccGradient gradient;
  Content content;
  bool weighted;
};

void PrintTo(const LccCase& c, std::ostream* os) { *os << c.name; }

LocalWindow box(std::size_t radius) { return {WindowShape::box, radius, 0.0}; }
LocalWindow gaussian(double sigma_mm) { return {WindowShape::gaussian, 0, sigma_mm}; }

std::vector<LccCase> lcc_cases() {
  std::vector<LccCase> cases;
  const std::pair<std::string, LocalWindow> windows[] = {
      {"Box1", box(1)}, {"Box2", box(2)}, {"Box4", box(4)}, {"Box7", box(7)}, {"Gauss1p5mm", gaussian(1.5)}};
  for (const auto& [wname, window] : windows)
    for (LccGradient gradient : {LccGradient::ants_own_window, LccGradient::exact})
      for (Content content : {Content::random, Content::smooth})
        for (bool weighted : {false, true})
          cases.push_back({wname + (gradient == LccGradient::exact ? "Exact" : "AntsOwnWindow") +
                               (content == Content::random ? "Random" : "Smooth") + (weighted ? "Weighted" : ""),
                           window, gradient, content, weighted});
  return cases;
}

class LocalCcAgainstWindowLoops : public testing::TestWithParam<LccCase> {};

// Every voxel is compared, so the clipped windows of the faces, edges and corners are too
// (radius 7 is wider than the grid along y and z). Tolerance: the window sums are prefix
// differences along lines of at most 13 voxels of centred values, ~1e-15 relative; 1e-11 on
// the cost and 1e-9 of the largest gradient leave room and still catch any wrong term.
TEST_P(LocalCcAgainstWindowLoops, CostAndGradientAgree) {
  const LccCase& c = GetParam();
  const Images im = make_images(c.content, c.weighted);
  const std::size_t n = im.fixed.size();
  const LocalCcOptions options{c.window, c.gradient};
  std::vector<double> fast(3 * n), slow(3 * n);
  const double fast_cost = local_cc(im.input(), options, fast);
  const double slow_cost = reference::local_cc(im.input(), options, slow);
  EXPECT_LT(slow_cost, -0.05);  // not a degenerate case
  EXPECT_GT(slow_cost, -1.0);
  EXPECT_NEAR(fast_cost, slow_cost, 1e-11 * std::abs(slow_cost));
  ASSERT_GT(max_abs(slow), 0.0);
  EXPECT_LT(relative_difference(fast, slow), 1e-9);
}

INSTANTIATE_TEST_SUITE_P(DenseMetrics, LocalCcAgainstWindowLoops, testing::ValuesIn(lcc_cases()),
                         [](const testing::TestParamInfo<LccCase>& tested) { return tested.param.name; });

// ---- Gradients against finite differences of the cost ---------------------------------------

// The displacement u(x) of one voxel moves its warped value to M0(x + u): the moving image
// is the closed-form smooth_moving, so displacing it is exact resampling, not a linearisation,
// and the check covers the chain rule through grad M as well as d cost / d m.
// The difference is Richardson-extrapolated from central differences at h = 0.02 and 0.01 mm
// (error O(h^4)): a plain central difference needs h small enough for its O(h^2) error
// (measured: 2e-2 relative at h = 0.05 mm for MI, whose B-spline window is only ~0.07
// intensity wide here; 8e-4 at 0.01 mm) but then loses digits to the float storage of the
// moved value (~6e-8 of a change of ~2e-3: 3e-4 at 0.002 mm). Extrapolated, what is left is
// that float noise: measured at most 3.4e-4 relative, where the moving image barely changes
// along the axis, against the 1e-3 tolerance; a missing factor, a wrong sign or a dropped
// term is off by O(1).
using Cost = std::function<double(const DenseCostInput&, std::span<double>)>;

double central_difference(const Cost& cost, Images& im, std::size_t voxel, int axis, double h) {
  const float original = im.moving[voxel];
  Point p = position_mm(im.grid, voxel);
  p[axis] += h;
  im.moving[voxel] = float(smooth_moving(p));
  const double up = cost(im.input(), {});
  p[axis] -= 2.0 * h;
  im.moving[voxel] = float(smooth_moving(p));
  const double down = cost(im.input(), {});
  im.moving[voxel] = original;
  return (up - down) / (2.0 * h);
}

void expect_gradient_matches_finite_difference(const Cost& cost, bool weighted) {
  Images im = make_images(Content::smooth, weighted);
  const std::size_t n = im.fixed.size();
  std::vector<double> gradient(3 * n);
  cost(im.input(), gradient);
  const double scale = max_abs(gradient);
  ASSERT_GT(scale, 0.0);
  const std::size_t nx = std::size_t(im.grid.dims.nx), plane = nx * std::size_t(im.grid.dims.ny);
  // Interior, face, edge and corner voxels, and (weighted) one inside the weight's hole.
  const std::size_t voxels[] = {4 * plane + 5 * nx + 6, 0, nx - 1, 3 * plane + 7, n - 1, n / 2 + 3, 5 * nx + 6};
  const double h = 0.01;
  int checked = 0;
  for (std::size_t v : voxels) {
    for (int a = 0; a < 3; ++a) {
      const double difference =
          (4.0 * central_difference(cost, im, v, a, h) - central_difference(cost, im, v, a, 2.0 * h)) / 3.0;
      EXPECT_NEAR(gradient[3 * v + a], difference, 1e-3 * std::abs(difference) + 1e-6 * scale)
          << "voxel " << v << " axis " << a;
      checked += gradient[3 * v + a] != 0.0;
    }
  }
  EXPECT_GE(checked, 12);  // most of the checks are of non-zero derivatives
}

TEST(DenseMetrics, LocalCcExactGradientIsTheDerivativeOfTheCost) {
  for (const LocalWindow& window : {box(2), gaussian(2.0)}) {
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(window.shape == WindowShape::box ? "box" : "gaussian");
      expect_gradient_matches_finite_difference(
          [&](const DenseCostInput& in, std::span<double> out) {
            return local_cc(in, {window, LccGradient::exact}, out);
          },
          weighted);
    }
  }
}

TEST(DenseMetrics, MeanSquaresGradientIsTheDerivativeOfTheCost) {
  for (bool weighted : {false, true})
    expect_gradient_matches_finite_difference(
        [](const DenseCostInput& in, std::span<double> out) { return mean_squares(in, out); }, weighted);
}

// The voxels checked are not the moving image's min or max, whose moves would re-bin the
// histogram (the derivative holds the bin mapping fixed, as ITK's does).
TEST(DenseMetrics, MattesGradientIsTheDerivativeOfTheCost) {
  for (int bins : {16, 32})
    for (bool weighted : {false, true})
      expect_gradient_matches_finite_difference(
          [&](const DenseCostInput& in, std::span<double> out) { return mattes_mutual_information(in, {bins}, out); },
          weighted);
}

// ANTs' own-window gradient is not the cost's derivative, but it must point downhill: on
// smooth images it is close in direction to the exact one (each voxel's neighbours' windows
// see nearly what its own does). Measured cosine 0.78 here; a sign error would give -0.78.
TEST(DenseMetrics, LocalCcAntsGradientPointsDownhillLikeTheExactOne) {
  const Images im = make_images(Content::smooth, false);
  std::vector<double> ants(im.moving_gradient.size()), exact(ants.size());
  local_cc(im.input(), {box(2), LccGradient::ants_own_window}, ants);
  local_cc(im.input(), {box(2), LccGradient::exact}, exact);
  double dot = 0.0, aa = 0.0, ee = 0.0;
  for (std::size_t i = 0; i < ants.size(); ++i) {
    dot += ants[i] * exact[i];
    aa += ants[i] * ants[i];
    ee += exact[i] * exact[i];
  }
  EXPECT_GT(dot / std::sqrt(aa * ee), 0.5);
}

// ---- Brute force against the fast forms: mean squares and Mattes MI ---------------------------

TEST(DenseMetrics, MeanSquaresEqualsItsDirectSum) {
  for (bool weighted : {false, true}) {
    const Images im = make_images(Content::random, weighted);
    std::vector<double> fast(im.moving_gradient.size()), slow(fast.size());
    EXPECT_NEAR(mean_squares(im.input(), fast), reference::mean_squares(im.input(), slow), 1e-12 * 1e3);
    EXPECT_LT(relative_difference(fast, slow), 1e-13);
  }
}

// The fast form visits the four bins of each voxel's Parzen window and sums in slabs; the
// loops visit every bin: equal to rounding (~1e-15 of MI).
TEST(DenseMetrics, MattesEqualsItsEveryBinLoops) {
  for (Content content : {Content::random, Content::smooth})
    for (bool weighted : {false, true})
      for (int bins : {8, 32, 50}) {
        const Images im = make_images(content, weighted);
        std::vector<double> fast(im.moving_gradient.size()), slow(fast.size());
        const double slow_cost = reference::mattes_mutual_information(im.input(), {bins}, slow);
        EXPECT_LT(slow_cost, -0.01);
        EXPECT_NEAR(mattes_mutual_information(im.input(), {bins}, fast), slow_cost, 1e-12);
        EXPECT_LT(relative_difference(fast, slow), 1e-12);
      }
}

// ---- Invariants --------------------------------------------------------------------------

// m = a f + b makes every window perfectly correlated (rho2 = 1, either sign of a, as ANTs'
// CC squares the correlation), a maximum of the correlation: cost -1, zero gradient.
TEST(DenseMetrics, LocalCcIsMinusOneForAnAffineIntensityMap) {
  for (double a : {2.5, -0.7}) {
    Images im = make_images(Content::smooth, true);
    for (std::size_t i = 0; i < im.moving.size(); ++i) im.moving[i] = float(a * im.fixed[i] + 40.0);
    // grad m of the mapped image: any field will do, the derivative it multiplies is zero.
    std::vector<double> gradient(im.moving_gradient.size());
    for (const LocalWindow& window : {box(1), box(3), gaussian(2.0)})
      for (LccGradient mode : {LccGradient::ants_own_window, LccGradient::exact}) {
        EXPECT_NEAR(local_cc(im.input(), {window, mode}, gradient), -1.0, 1e-12);
        // f is float-rounded after the map, so f and m are affine only to ~1e-7 relative.
        EXPECT_LT(max_abs(gradient), 1e-6);
      }
  }
}

// ANTs' convention for flat windows: rho2 = 1, no gradient. A constant moving image is flat
// everywhere; so is a fixed one, even of large intensity (where ANTs' absolute epsilon would
// read the sums' rounding as variance).
TEST(DenseMetrics, LocalCcFlatWindowsCountAsCorrelatedWithoutGradient) {
  Images im = make_images(Content::smooth, false);
  std::vector<double> gradient(im.moving_gradient.size());
  std::fill(im.moving.begin(), im.moving.end(), 3.0f);
  EXPECT_EQ(local_cc(im.input(), {box(2), LccGradient::exact}, gradient), -1.0);
  EXPECT_EQ(max_abs(gradient), 0.0);
  im = make_images(Content::smooth, false);
  std::fill(im.fixed.begin(), im.fixed.end(), 1234.5f);
  EXPECT_EQ(local_cc(im.input(), {box(2), LccGradient::ants_own_window}, gradient), -1.0);
  EXPECT_EQ(max_abs(gradient), 0.0);
}

TEST(DenseMetrics, MeanSquaresIsZeroAtEquality) {
  Images im = make_images(Content::smooth, true);
  im.fixed = im.moving;
  std::vector<double> gradient(im.moving_gradient.size());
  EXPECT_EQ(mean_squares(im.input(), gradient), 0.0);
  EXPECT_EQ(max_abs(gradient), 0.0);
}

// MI(f, f) above MI(f, m) for m a noisy, a shifted and a scrambled copy of f.
TEST(DenseMetrics, MattesMiIsLargestForIdenticalImages) {
  const Images im = make_images(Content::smooth, false);
  const DenseGrid& grid = im.grid;
  auto cost_against = [&](const std::vector<float>& moving) {
    return mattes_mutual_information({grid, im.fixed, moving, {}, {}}, {32});
  };
  const double identical = cost_against(im.fixed);
  std::vector<float> noisy = im.fixed, shifted = sample(grid, [](const Point& p) { return smooth_fixed({p[0] + 1.0, p[1], p[2]}); }),
                     scrambled = im.fixed;
  std::mt19937 engine(3);
  std::normal_distribution<float> noise(0.0f, 2.0f);
  for (float& v : noisy) v += noise(engine);
  std::shuffle(scrambled.begin(), scrambled.end(), engine);
  EXPECT_LT(identical, cost_against(noisy));
  EXPECT_LT(cost_against(noisy), cost_against(scrambled));
  EXPECT_LT(identical, cost_against(shifted));
  EXPECT_NEAR(cost_against(scrambled), 0.0, 0.15);  // independent: MI near 0 (small-sample bias)
}

// The partition of the work is fixed, so serial and threaded runs agree bit for bit.
TEST(DenseMetrics, ResultsAreBitwiseTheSameSerialAndThreaded) {
  for (bool weighted : {false, true}) {
    const Images im = make_images(Content::random, weighted);
    const std::size_t size = im.moving_gradient.size();
    using Run = std::function<double(std::span<double>, Execution)>;
    const Run runs[] = {
        [&](std::span<double> g, Execution e) { return local_cc(im.input(), {box(3), LccGradient::exact}, g, e); },
        [&](std::span<double> g, Execution e) { return local_cc(im.input(), {gaussian(1.5), LccGradient::ants_own_window}, g, e); },
        [&](std::span<double> g, Execution e) { return mean_squares(im.input(), g, e); },
        [&](std::span<double> g, Execution e) { return mattes_mutual_information(im.input(), {32}, g, e); }};
    for (const Run& run : runs) {
      std::vector<double> serial(size), parallel(size);
      const double serial_cost = run(serial, Execution::serial);
      EXPECT_EQ(serial_cost, run(parallel, Execution::parallel));
      EXPECT_EQ(serial, parallel);
    }
  }
}

// ---- Conventions and refusals --------------------------------------------------------------

// Exact for a linear image, border planes (one-sided differences) included; 1/mm, grid axes.
TEST(DenseMetrics, CentralDifferenceGradientIsInPerMillimetreAlongTheGridAxes) {
  const DenseGrid grid = test_grid();
  const std::vector<float> image = sample(grid, [](const Point& p) { return 2.0 * p[0] - 3.0 * p[1] + 0.5 * p[2]; });
  const std::vector<float> gradient = central_difference_gradient(grid, image);
  for (std::size_t i = 0; i < image.size(); ++i) {
    EXPECT_NEAR(gradient[3 * i + 0], 2.0, 1e-5);
    EXPECT_NEAR(gradient[3 * i + 1], -3.0, 1e-5);
    EXPECT_NEAR(gradient[3 * i + 2], 0.5, 1e-5);
  }
}

TEST(DenseMetrics, VoxelsOfWeightZeroGetNoGradient) {
  const Images im = make_images(Content::smooth, true);
  std::vector<double> gradient(im.moving_gradient.size());
  const std::function<void()> runs[] = {[&] { local_cc(im.input(), {box(2), LccGradient::exact}, gradient); },
                                        [&] { local_cc(im.input(), {box(2), LccGradient::ants_own_window}, gradient); },
                                        [&] { mean_squares(im.input(), gradient); },
                                        [&] { mattes_mutual_information(im.input(), {32}, gradient); }};
  for (const auto& run : runs) {
    run();
    for (std::size_t i = 0; i < im.weight.size(); ++i) {
      if (im.weight[i] != 0.0f) continue;
      for (int a = 0; a < 3; ++a) ASSERT_EQ(gradient[3 * i + a], 0.0) << "voxel " << i;
    }
  }
}

TEST(DenseMetrics, AnAllZeroWeightGivesTheWorstCost) {
  Images im = make_images(Content::smooth, true);
  std::fill(im.weight.begin(), im.weight.end(), 0.0f);
  EXPECT_EQ(local_cc(im.input(), {}), kWorstLocalCcCost);
  EXPECT_EQ(mean_squares(im.input()), regpipe_common::kWorstLeastSquaresCost);
  EXPECT_EQ(mattes_mutual_information(im.input(), {}), regpipe_common::kWorstMutualInformationCost);
}

TEST(DenseMetrics, MismatchedSizesAndTooFewBinsAreRefused) {
  Images im = make_images(Content::smooth, false);
  std::vector<double> gradient(im.moving_gradient.size() - 3);
  EXPECT_THROW(local_cc(im.input(), {}, gradient), rp::Error);
  im.moving.pop_back();
  EXPECT_THROW(mean_squares(im.input()), rp::Error);
  im = make_images(Content::smooth, false);
  EXPECT_THROW(mattes_mutual_information(im.input(), {4}), rp::Error);
}

}  // namespace
