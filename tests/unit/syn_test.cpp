// Greedy SyN (regpipe_common/syn/, issue 16): its parts against hand-derived values, and
// known-truth registrations of a blob phantom warped by smooth random diffeomorphisms, judged
// by the endpoint error against the true field, the Jacobian and inverse consistency.
#include "../support/syn_known_warp.hpp"

#include <regpipe_common/fields/composition.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/syn/convergence_monitor.hpp>
#include <regpipe_common/syn/syn_levels.hpp>
#include <regpipe_common/syn/syn_registration.hpp>
#include <regpipe_common/syn/syn_update.hpp>

#include <regpipe/plugin.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <functional>
#include <random>
#include <string>

namespace regpipe_common::syn {
namespace {

using syn_test::Figures;
using syn_test::KnownWarp;

// An axis-aligned LPS grid of `spacing` mm voxels centred on the origin.
FieldGeometry centred_grid(int n, double spacing) {
  const double o = -0.5 * (n - 1) * spacing;
  return {{n, n, n}, {spacing, 0, 0, o, 0, spacing, 0, o, 0, 0, spacing, o, 0, 0, 0, 1}};
}

// A smooth blob phantom: an ellipsoidal body (40, soft edge) holding 200 Gaussian blobs of
// random amplitude (-30..60) and width (sigma 2.5-5 mm, about 1-2 voxels of 3 mm), so every
// part of the body has structure at the scale SyN resolves. (With 70 blobs of 4-8 mm local
// CC is above 0.998 before registering and the field is less constrained: 0.55 mm.)
std::vector<float> blob_phantom(const FieldGeometry& grid, std::uint64_t seed) {
  struct Blob {
    Vec3 centre;
    double amplitude, sigma;
  };
  const Vec3 radii{50, 42, 46};
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * double(rng() >> 11) * 0x1p-53; };
  std::vector<Blob> blobs;
  while (blobs.size() < 200) {
    const Vec3 c{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
    if (c.x * c.x + c.y * c.y + c.z * c.z > 0.8) continue;
    blobs.push_back({{c.x * radii.x, c.y * radii.y, c.z * radii.z}, uniform(-0.3, 0.6), uniform(2.5, 5.0)});
  }
  std::vector<float> image(voxel_count(grid.dims));
  const Grid& g = grid.dims;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const Vec3 p = world_of_voxel(grid, x, y, z);
        const double r = std::sqrt(p.x * p.x / (radii.x * radii.x) + p.y * p.y / (radii.y * radii.y) +
                                   p.z * p.z / (radii.z * radii.z));
        double v = 0.4 / (1.0 + std::exp((r - 1.0) * 25.0));
        for (const Blob& b : blobs) {
          const Vec3 d = p - b.centre;
          v += b.amplitude * std::exp(-(d.x * d.x + d.y * d.y + d.z * d.z) / (2 * b.sigma * b.sigma));
        }
        image[x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z)] = float(std::max(0.0, 100.0 * v));
      }
  return image;
}

// The phantom on 48^3 voxels of 3 mm, warped by up to 4 mm (identity error over the body:
// 1.47 mm mean).
KnownWarp phantom_case() {
  const FieldGeometry grid = centred_grid(48, 3.0);
  return syn_test::known_warp(grid, blob_phantom(grid, 5), 4.0, 5.0, 11, 20.0f);
}

// ANTs' SyN[0.1, 3, 0] with its convergence defaults (1e-6, window 10), two levels
// (--shrink-factors 2x1 --smoothing-sigmas 1x0vox), local CC of radius 2.
SynOptions phantom_options() {
  SynOptions o;
  o.levels = {{40, 2, 1.0}, {40, 1, 0.0}};
  o.metric.cc.window.radius_voxels = 2;
  return o;
}

SynResult register_case(const KnownWarp& k, const SynOptions& o, double* seconds, const double* affine = nullptr,
                        const std::vector<float>* moving = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  SynResult r = syn_register(syn_test::image_view(k.grid, k.fixed), syn_test::image_view(k.grid, moving ? *moving : k.moving),
                             o, affine);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// What every known-truth registration must show: the error well below the identity's and
// below `max_mean_endpoint_mm`, no folding, forward and inverse inverse to each other.
void expect_recovered(const SynResult& r, const KnownWarp& k, double max_mean_endpoint_mm, const char* what,
                      double seconds) {
  const Figures f = syn_test::figures_of(r, k);
  std::printf("%s: %s; %.1f s\n", what, syn_test::describe(f, r).c_str(), seconds);
  // Consistency: the final half-way inverses themselves are solved to 0.001 mm.
  syn_test::expect_within(f, {max_mean_endpoint_mm, 0.6, 0.3}, what);
  EXPECT_LE(r.inverse_max_residual_mm, 0.01);
  for (const SynLevelReport& l : r.levels) EXPECT_FALSE(l.metric_values.empty());
}

TEST(ConvergenceMonitor, IsInfiniteUntilTheWindowIsFullThenTheFallingSlopeOfItsFit) {
  ConvergenceMonitor m(3);
  m.add(3.0);
  m.add(2.0);
  EXPECT_EQ(m.convergence_value(), std::numeric_limits<double>::infinity());
  m.add(1.0);
  // By hand: z = (3, 2, 1) / 6 at t = 0, 1/2, 1; c0 = (0.5 + 0.125 z1 / 0.5) / 1.25 = 0.4667,
  // c1 = (0.125 z1 / 0.5 + z2) / 1.25 = 0.2, value -(c1 - c0) = 0.2667 (the least-squares
  // slope would be 0.3333).
  EXPECT_NEAR(m.convergence_value(), 0.8 / 3.0, 1e-12);
  ConvergenceMonitor constant(4), rising(4);
  for (int i = 0; i < 4; ++i) {
    constant.add(-0.5);
    rising.add(-1.0 + 0.1 * i);
  }
  EXPECT_NEAR(constant.convergence_value(), 0.0, 1e-15);
  EXPECT_LT(rising.convergence_value(), 0.0);  // a metric getting worse converges at once
  // The normalisation counts every value of the level, also those the window dropped.
  ConvergenceMonitor slid(3);
  for (double v : {100.0, 3.0, 2.0, 1.0}) slid.add(v);
  EXPECT_NEAR(slid.convergence_value(), 0.8 / 3.0 * 6.0 / 106.0, 1e-12);
  EXPECT_THROW(ConvergenceMonitor(1), rp::Error);
}

TEST(SynLevels, ShrinkingKeepsTheGridCentreAndMultipliesTheSpacing) {
  const double c = std::cos(0.3), s = std::sin(0.3);
  const FieldGeometry full{{49, 20, 7}, {2 * c, -2 * s, 0, 10, 2 * s, 2 * c, 0, -5, 0, 0, 3, 7, 0, 0, 0, 1}};
  const FieldGeometry half = shrink_geometry(full, 2);
  EXPECT_EQ(half.dims.nx, 24);
  EXPECT_EQ(half.dims.ny, 10);
  EXPECT_EQ(half.dims.nz, 3);
  auto centre = [](const FieldGeometry& g) {
    return apply_affine(g.voxel_to_world, {0.5 * (g.dims.nx - 1), 0.5 * (g.dims.ny - 1), 0.5 * (g.dims.nz - 1)});
  };
  EXPECT_LT(norm(centre(half) - centre(full)), 1e-9);
  for (int i = 0; i < 12; ++i) {
    if (i % 4 != 3) {
      EXPECT_NEAR(half.voxel_to_world[i], 2 * full.voxel_to_world[i], 1e-12) << i;
    }
  }
  EXPECT_EQ(shrink_geometry(full, 16).dims.nz, 1);  // never below one voxel
  EXPECT_THROW(shrink_geometry(full, 0), rp::Error);
}

TEST(SynUpdate, ScalingMakesTheLargestVectorTheStepInVoxelsOfAnAnisotropicGrid) {
  const FieldGeometry grid{{5, 4, 3}, {1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1}};
  DisplacementField f = zero_field(grid);
  f.vectors[3 * 7 + 2] = 8.0f;   // 2 voxels along z
  f.vectors[3 * 9 + 0] = 1.5f;   // 1.5 voxels along x
  EXPECT_NEAR(scale_to_step(f, 0.25), 2.0, 1e-12);
  EXPECT_NEAR(f.vectors[3 * 7 + 2], 1.0, 1e-6);  // 0.25 voxel of 4 mm
  EXPECT_NEAR(f.vectors[3 * 9 + 0], 0.1875, 1e-6);
  DisplacementField zero = zero_field(grid);
  EXPECT_EQ(scale_to_step(zero, 0.25), 0.0);
  EXPECT_EQ(max_displacement_mm(zero), 0.0);
}

TEST(SynUpdate, FieldSmoothingZeroesTheBorderAndBlendsBelowHalfAVoxelSquared) {
  const FieldGeometry grid = centred_grid(9, 2.0);
  DisplacementField f = zero_field(grid);
  for (float& v : f.vectors) v = 1.0f;
  DisplacementField untouched = f;
  ants_smooth_field(untouched, 0.0);
  EXPECT_EQ(untouched.vectors, f.vectors);  // variance 0: not even the border is touched
  DisplacementField smoothed = f;
  ants_smooth_field(smoothed, 3.0);
  EXPECT_EQ(smoothed.vectors[0], 0.0f);                  // corner
  EXPECT_NEAR(smoothed.vectors[3 * (4 + 9 * (4 + 9 * 4))], 1.0f, 1e-6f);  // centre: a constant stays
  // Variance 0.25: half smoothed, half the input (ANTs' blend); an impulse keeps half its peak
  // plus the smoothed share.
  DisplacementField impulse = zero_field(grid);
  const std::size_t centre = 4 + 9 * (4 + 9 * 4);
  impulse.vectors[3 * centre] = 1.0f;
  DisplacementField full = impulse;
  smooth_field_gaussian(full, 0.5);
  ants_smooth_field(impulse, 0.25);
  EXPECT_NEAR(impulse.vectors[3 * centre], 0.5 * full.vectors[3 * centre] + 0.5, 1e-6);
}

TEST(SynUpdate, DescentPointsAlongTheShiftThatAlignsTheImagesOnAnObliqueGrid) {
  // moving(x) = fixed(x - s): the sampling displacement that aligns them is +s. The pattern
  // varies alike along the three world axes (its gradients' second moment is close to
  // isotropic), so the mean descent direction is close to s itself; the grid's axes are
  // rotated 29 degrees about y, so a mix-up of grid and world axes would show.
  const double c = std::cos(0.5), s = std::sin(0.5);
  const FieldGeometry grid{{24, 22, 20}, {2 * c, 0, 2 * s, -20, 0, 2, 0, -20, -2 * s, 0, 2 * c, -20, 0, 0, 0, 1}};
  const Vec3 shift{1.0, -0.6, 0.4};
  std::vector<float> fixed(voxel_count(grid.dims)), moving(fixed.size());
  auto pattern = [](Vec3 p) { return 50 + 20 * (std::sin(0.3 * p.x) + std::sin(0.3 * p.y) + std::sin(0.3 * p.z)); };
  for (int z = 0; z < grid.dims.nz; ++z)
    for (int y = 0; y < grid.dims.ny; ++y)
      for (int x = 0; x < grid.dims.nx; ++x) {
        const Vec3 p = world_of_voxel(grid, x, y, z);
        const std::size_t i = x + std::size_t(grid.dims.nx) * (y + std::size_t(grid.dims.ny) * z);
        fixed[i] = float(pattern(p));
        moving[i] = float(pattern(p - shift));
      }
  for (SynMetricKind kind : {SynMetricKind::cc, SynMetricKind::mean_squares, SynMetricKind::mattes}) {
    SynMetric metric;
    metric.kind = kind;
    metric.cc.window.radius_voxels = 2;
    const MetricDescent d = metric_descent(grid, fixed, moving, metric);
    Vec3 mean{0, 0, 0};
    for (std::size_t i = 0; i < fixed.size(); ++i)
      mean = mean + Vec3{d.direction.vectors[3 * i], d.direction.vectors[3 * i + 1], d.direction.vectors[3 * i + 2]};
    const double cosine = (mean.x * shift.x + mean.y * shift.y + mean.z * shift.z) / (norm(mean) * norm(shift));
    EXPECT_GT(cosine, 0.95) << "metric " << int(kind);
  }
}

TEST(SynRegistration, LocalCcRecoversAKnownFourMillimetreWarpOfTheBlobPhantom) {
  const KnownWarp k = phantom_case();
  double seconds = 0;
  const SynResult r = register_case(k, phantom_options(), &seconds);
  // Measured: mean endpoint error 0.39 mm (0.13 voxel) against 1.47 for the identity;
  // Jacobian min 0.74; forward then inverse mean 0.02, max 0.10 mm; about 1.5 s on 2 cores.
  expect_recovered(r, k, 0.5, "CC radius 2, 48^3 at 3 mm, 4 mm warp", seconds);
}

TEST(SynRegistration, MeanSquaresRecoversTheSameWarp) {
  const KnownWarp k = phantom_case();
  SynOptions o = phantom_options();
  o.metric.kind = SynMetricKind::mean_squares;
  double seconds = 0;
  const SynResult r = register_case(k, o, &seconds);
  expect_recovered(r, k, 0.6, "mean squares, 48^3 at 3 mm, 4 mm warp", seconds);
}

TEST(SynRegistration, MattesMiRecoversTheWarpAcrossANonMonotonicSecondContrast) {
  KnownWarp k = phantom_case();
  // Inverted, with a ripple whose slope (15/8) beats the inversion's: the map from the fixed
  // image's intensities to the moving one's rises and falls.
  for (float& v : k.moving) v = 150.0f - v + 15.0f * std::sin(v / 8.0f);
  SynOptions o = phantom_options();
  o.metric.kind = SynMetricKind::mattes;
  double seconds = 0;
  const SynResult r = register_case(k, o, &seconds);
  expect_recovered(r, k, 0.85, "Mattes MI 32 bins, second contrast, 48^3 at 3 mm, 4 mm warp", seconds);
}

TEST(SynRegistration, AnInitialAffineIsAppliedToTheMovingImageFirst) {
  const KnownWarp k = phantom_case();
  // The moving image's world moved by A (fixed world -> moving world, regpipe's direction):
  // moved(y) = moving(A^-1 y), so moved seen through A is the moving image again and SyN on
  // top of A must find the same field. Whole-voxel shifts, so that the two resamplings
  // (making `moved`, then SyN's through A) do not blur it.
  const double affine[16] = {1, 0, 0, 3.0, 0, 1, 0, -6.0, 0, 0, 1, 3.0, 0, 0, 0, 1};
  const double inverse[16] = {1, 0, 0, -3.0, 0, 1, 0, 6.0, 0, 0, 1, -3.0, 0, 0, 0, 1};
  const std::vector<float> moved = warp_image(syn_test::image_view(k.grid, k.moving),
                                              view_of(affine_as_field(inverse, k.grid)), k.grid, 0.0f);
  double seconds = 0;
  const SynResult r = register_case(k, phantom_options(), &seconds, affine, &moved);
  expect_recovered(r, k, 0.5, "CC radius 2 after a 7.3 mm initial translation", seconds);
  // The metric before the first update compares the fixed image with the moving one through
  // A: as good as without any translation, and far worse through A^-1 (the wrong direction).
  SynOptions one = phantom_options();
  one.levels = {{1, 1, 0.0}};
  const double untranslated = register_case(k, one, &seconds).levels[0].metric_values[0];
  const double right = register_case(k, one, &seconds, affine, &moved).levels[0].metric_values[0];
  const double wrong = register_case(k, one, &seconds, inverse, &moved).levels[0].metric_values[0];
  std::printf("first CC: untranslated %.4f, through A %.4f, through A^-1 %.4f\n", untranslated, right, wrong);
  EXPECT_NEAR(right, untranslated, 0.01);
  EXPECT_GT(wrong, untranslated + 0.1);  // measured -0.81 against -0.99
}

TEST(SynRegistration, GivesTheSameBitsSerialAndParallel) {
  const FieldGeometry grid = centred_grid(20, 6.0);
  const KnownWarp k = syn_test::known_warp(grid, blob_phantom(grid, 5), 5.0, 3.0, 3, 20.0f);
  SynOptions o = phantom_options();
  o.levels = {{3, 2, 1.0}, {3, 1, 0.0}};
  double seconds = 0;
  o.execution = Execution::serial;
  const SynResult serial = register_case(k, o, &seconds);
  o.execution = Execution::parallel;
  const SynResult parallel = register_case(k, o, &seconds);
  EXPECT_EQ(serial.forward.vectors, parallel.forward.vectors);
  EXPECT_EQ(serial.inverse.vectors, parallel.inverse.vectors);
  EXPECT_EQ(serial.levels[1].metric_values, parallel.levels[1].metric_values);
}

TEST(SynRegistration, RefusesBadOptionsAndStopsWhenTheObserverSaysSo) {
  const FieldGeometry grid = centred_grid(12, 6.0);
  const std::vector<float> image = blob_phantom(grid, 5);
  const rp_image view = syn_test::image_view(grid, image);
  auto refused = [&](const std::function<void(SynOptions&)>& change) {
    SynOptions o = phantom_options();
    change(o);
    try {
      syn_register(view, view, o);
    } catch (const rp::Error& e) {
      return e.status() == RP_INVALID_ARGUMENT;
    }
    return false;
  };
  EXPECT_TRUE(refused([](SynOptions& o) { o.gradient_step = 0.0; }));
  EXPECT_TRUE(refused([](SynOptions& o) { o.levels.clear(); }));
  EXPECT_TRUE(refused([](SynOptions& o) { o.levels[0].shrink_factor = 0; }));
  EXPECT_TRUE(refused([](SynOptions& o) { o.update_field_variance_in_voxel_space = -1.0; }));
  EXPECT_TRUE(refused([](SynOptions& o) { o.convergence_window_size = 1; }));
  EXPECT_TRUE(refused([](SynOptions& o) { o.levels[1].smoothing_sigma = -1.0; }));
  int calls = 0;
  try {
    syn_register(view, view, phantom_options(), nullptr, [&](int, int, double) { return ++calls < 2; });
    ADD_FAILURE() << "not cancelled";
  } catch (const rp::Error& e) {
    EXPECT_EQ(e.status(), RP_CANCELLED);
  }
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace regpipe_common::syn
