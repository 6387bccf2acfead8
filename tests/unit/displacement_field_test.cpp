// Displacement-field operations of regpipe_common (issue 16): sampling, composition in both
// orders and with affines, Gaussian smoothing, the fixed-point inverse, the Jacobian
// determinant, scaling and squaring, random diffeomorphisms and warping. Fields live on an
// oblique, anisotropic grid so that every world <-> voxel conversion is exercised.
#include <regpipe_common/fields/composition.hpp>
#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/fields/inverse.hpp>
#include <regpipe_common/fields/jacobian.hpp>
#include <regpipe_common/fields/random_diffeomorphism.hpp>
#include <regpipe_common/fields/resample_field.hpp>
#include <regpipe_common/fields/scaling_squaring.hpp>
#include <regpipe_common/fields/warp_image.hpp>

#include <regpipe/plugin.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace regpipe_common {
namespace {

// Spacing 2 x 2 x 2.5 mm, rotated 10 degrees about z, origin off-centre: an LPS grid such as
// ITK reads from an oblique NIfTI.
FieldGeometry oblique_grid(int nx, int ny, int nz) {
  const double a = 10.0 * M_PI / 180.0, c = std::cos(a), s = std::sin(a);
  return {{nx, ny, nz}, {2 * c, -2 * s, 0, -40, 2 * s, 2 * c, 0, 30, 0, 0, 2.5, -20, 0, 0, 0, 1}};
}

Vec3 grid_centre(const FieldGeometry& g) {
  return apply_affine(g.voxel_to_world, {0.5 * (g.dims.nx - 1), 0.5 * (g.dims.ny - 1), 0.5 * (g.dims.nz - 1)});
}

Vec3 stored(const DisplacementField& f, std::size_t i) {
  return {f.vectors[3 * i], f.vectors[3 * i + 1], f.vectors[3 * i + 2]};
}

// Largest |a(x) - b(x)| over the voxels for which keep(x, y, z) holds.
template <class Keep>
double max_difference(const DisplacementField& a, const DisplacementField& b, const Keep& keep) {
  const Grid& g = a.geometry.dims;
  double largest = 0.0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x)
        if (keep(x, y, z)) {
          const std::size_t i = x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z);
          largest = std::max(largest, norm(stored(a, i) - stored(b, i)));
        }
  return largest;
}

double max_difference(const DisplacementField& a, const DisplacementField& b) {
  return max_difference(a, b, [](int, int, int) { return true; });
}

// True more than `margin` voxels away from every border plane.
auto interior(const Grid& g, int margin) {
  return [g, margin](int x, int y, int z) {
    return x >= margin && y >= margin && z >= margin && x < g.nx - margin && y < g.ny - margin &&
           z < g.nz - margin;
  };
}

DisplacementField constant_field(const FieldGeometry& geometry, Vec3 u) {
  DisplacementField f = zero_field(geometry);
  for (std::size_t i = 0; i < f.vectors.size(); i += 3) {
    f.vectors[i] = float(u.x);
    f.vectors[i + 1] = float(u.y);
    f.vectors[i + 2] = float(u.z);
  }
  return f;
}

// A smooth random diffeomorphism of 6 mm on a 2-2.5 mm grid: the known-truth warp of issue 16.
RandomDiffeomorphism six_mm_warp(const FieldGeometry& geometry, std::uint64_t seed = 7) {
  RandomDiffeomorphismOptions options;
  options.seed = seed;
  options.smoothing_sigma_voxels = 5.0;
  options.max_displacement_mm = 6.0;
  return random_smooth_diffeomorphism(geometry, options);
}

// Rotation by `angle` about the unit axis n (Rodrigues), as a row-major 4x4 about `centre`.
void rotation_about(Vec3 n, double angle, Vec3 centre, double out[16]) {
  const double c = std::cos(angle), s = std::sin(angle), t = 1 - c;
  const double r[9] = {t * n.x * n.x + c,       t * n.x * n.y - s * n.z, t * n.x * n.z + s * n.y,
                       t * n.x * n.y + s * n.z, t * n.y * n.y + c,       t * n.y * n.z - s * n.x,
                       t * n.x * n.z - s * n.y, t * n.y * n.z + s * n.x, t * n.z * n.z + c};
  const double cv[3] = {centre.x, centre.y, centre.z};
  for (int row = 0; row < 3; ++row) {
    double shift = cv[row];
    for (int k = 0; k < 3; ++k) {
      out[4 * row + k] = r[3 * row + k];
      shift -= r[3 * row + k] * cv[k];
    }
    out[4 * row + 3] = shift;
  }
  out[12] = out[13] = out[14] = 0;
  out[15] = 1;
}

TEST(DisplacementField, SamplingReadsGridVectorsInterpolatesLinearlyAndIsZeroOutside) {
  const FieldGeometry geometry = oblique_grid(6, 5, 4);
  // u(x) = 0.1 (x - c) + (1, 2, 3): linear, so trilinear sampling reproduces it exactly.
  const Vec3 c = grid_centre(geometry);
  const double affine[16] = {1.1, 0, 0, 1 - 0.1 * c.x, 0, 1.1, 0, 2 - 0.1 * c.y, 0, 0, 1.1, 3 - 0.1 * c.z,
                             0, 0, 0, 1};
  const DisplacementField f = affine_as_field(affine, geometry);
  const DisplacementFieldView v = view_of(f);
  const Vec3 inside_point = apply_affine(geometry.voxel_to_world, {2.25, 1.5, 2.75});
  const Vec3 expected = 0.1 * (inside_point - c) + Vec3{1, 2, 3};
  EXPECT_LT(norm(sample_displacement(v, inside_point) - expected), 1e-5);
  EXPECT_LT(norm(sample_displacement(v, world_of_voxel(geometry, 5, 4, 3)) - stored(f, f.vectors.size() / 3 - 1)),
            1e-6);
  const Vec3 beyond = apply_affine(geometry.voxel_to_world, {5.01, 1, 1});
  EXPECT_EQ(norm(sample_displacement(v, beyond)), 0.0);
}

TEST(DisplacementField, RefusesAnEmptyGridASingularMatrixAndAWrongVectorCount) {
  FieldGeometry empty = oblique_grid(4, 4, 0);
  EXPECT_THROW(zero_field(empty), rp::Error);
  FieldGeometry flat = oblique_grid(4, 4, 4);
  flat.voxel_to_world[10] = 0;  // z axis collapsed
  EXPECT_THROW(zero_field(flat), rp::Error);
  DisplacementField short_field = zero_field(oblique_grid(4, 4, 4));
  short_field.vectors.pop_back();
  EXPECT_THROW(view_of(short_field), rp::Error);
}

TEST(FieldComposition, ZeroFieldOnEitherSideIsIdentity) {
  const FieldGeometry geometry = oblique_grid(24, 22, 20);
  const DisplacementField u = six_mm_warp(geometry).displacement;
  const DisplacementField zero = zero_field(geometry);
  EXPECT_LT(max_difference(compose_first_then_second(view_of(zero), view_of(u)), u), 1e-6);
  EXPECT_LT(max_difference(compose_first_then_second(view_of(u), view_of(zero)), u), 1e-6);
}

TEST(FieldComposition, OrderIsFirstThenSecondAsTheNamesSay) {
  // Two affines that do not commute; on the interior (where A x stays on B's grid) trilinear
  // sampling of affine fields is exact, so first A then B must give B*A, not A*B.
  const FieldGeometry geometry = oblique_grid(30, 30, 24);
  const Vec3 c = grid_centre(geometry);
  double a[16];
  rotation_about({0, 0, 1}, 0.05, c, a);
  a[3] += 1.5;
  // A stretch and shear about the centre, and a shift along z.
  const double b[16] = {1.04, 0.02, 0, c.x - 1.04 * c.x - 0.02 * c.y, 0, 0.97, 0, c.y - 0.97 * c.y,
                        0, 0, 1.0, 0.8, 0, 0, 0, 1};
  double ba[16] = {}, ab[16] = {};
  for (int r = 0; r < 4; ++r)
    for (int col = 0; col < 4; ++col)
      for (int k = 0; k < 4; ++k) {
        ba[4 * r + col] += b[4 * r + k] * a[4 * k + col];
        ab[4 * r + col] += a[4 * r + k] * b[4 * k + col];
      }
  const DisplacementField fa = affine_as_field(a, geometry), fb = affine_as_field(b, geometry);
  const DisplacementField composed = compose_first_then_second(view_of(fa), view_of(fb));
  const auto keep = interior(geometry.dims, 4);
  EXPECT_LT(max_difference(composed, affine_as_field(ba, geometry), keep), 1e-4);
  EXPECT_GT(max_difference(composed, affine_as_field(ab, geometry), keep), 0.1);  // the other order differs
  // The same chains with the affine as a matrix on either side of the field.
  EXPECT_LT(max_difference(compose_field_then_affine(view_of(fa), b), affine_as_field(ba, geometry)), 1e-4);
  EXPECT_LT(max_difference(compose_affine_then_field(a, view_of(fb), geometry), affine_as_field(ba, geometry), keep),
            1e-4);
}

TEST(GaussianSmoothing, PreservesAConstantField) {
  const FieldGeometry geometry = oblique_grid(17, 13, 9);
  const Vec3 u{1.5, -2.0, 0.25};
  DisplacementField f = constant_field(geometry, u);
  smooth_field_gaussian(f, 2.0);
  EXPECT_LT(max_difference(f, constant_field(geometry, u)), 1e-6);
}

TEST(GaussianSmoothing, SpreadsAnImpulseWithUnitMassAndVarianceSigmaSquared) {
  const FieldGeometry geometry = oblique_grid(41, 1, 1);  // flat y and z: only x smooths
  DisplacementField f = zero_field(geometry);
  f.vectors[3 * 20] = 1.0f;
  const double sigma = 3.0;
  smooth_field_gaussian(f, sigma);
  double mass = 0, variance = 0;
  for (int x = 0; x < 41; ++x) {
    const double w = f.vectors[3 * x];
    mass += w;
    variance += w * (x - 20) * (x - 20);
  }
  EXPECT_NEAR(mass, 1.0, 1e-6);
  // The discrete Gaussian has variance sigma^2 exactly; cutting 0.001 of the mass in the tails
  // takes at most ~1 % of it.
  EXPECT_NEAR(variance, sigma * sigma, 0.02 * sigma * sigma);
  EXPECT_THROW(smooth_field_gaussian(f, -1.0), rp::Error);
}

TEST(GaussianSmoothing, OfAnImageKeepsConstantsAndSpreadsEachAxisByItsOwnSigma) {
  const Grid g{31, 25, 21};
  std::vector<float> image(voxel_count(g), 5.0f);
  const double sigmas[3] = {2.0, 1.0, 0.0};
  smooth_image_gaussian(image, g, sigmas);
  for (float v : image) ASSERT_NEAR(v, 5.0f, 1e-5f);
  // An impulse: the mass stays 1, each axis gets variance sigma^2, the unsmoothed z axis none.
  std::fill(image.begin(), image.end(), 0.0f);
  const int cx = 15, cy = 12, cz = 10;
  image[cx + std::size_t(g.nx) * (cy + std::size_t(g.ny) * cz)] = 1.0f;
  smooth_image_gaussian(image, g, sigmas);
  double mass = 0, moment[3] = {0, 0, 0};
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const double w = image[x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z)];
        mass += w;
        moment[0] += w * (x - cx) * (x - cx);
        moment[1] += w * (y - cy) * (y - cy);
        moment[2] += w * (z - cz) * (z - cz);
      }
  EXPECT_NEAR(mass, 1.0, 1e-5);
  for (int a = 0; a < 3; ++a) EXPECT_NEAR(moment[a], sigmas[a] * sigmas[a], 0.02 * sigmas[a] * sigmas[a] + 1e-9) << a;
  const double negative[3] = {1.0, -1.0, 0.0};
  EXPECT_THROW(smooth_image_gaussian(image, g, negative), rp::Error);
  EXPECT_THROW(smooth_image_gaussian(std::span<float>(image).first(10), g, sigmas), rp::Error);
}

TEST(ResampleField, CarriesALinearFieldOntoAnotherGridExactlyAndIsZeroBeyondIt) {
  const FieldGeometry coarse = oblique_grid(8, 7, 6);
  const Vec3 c = grid_centre(coarse);
  const double affine[16] = {1.05, 0.02, 0, -0.05 * c.x + 1, 0, 0.97, 0, 0.03 * c.y - 2, 0, 0.01, 1.02, -0.02 * c.z,
                             0, 0, 0, 1};
  const DisplacementField f = affine_as_field(affine, coarse);
  // A finer grid inside the coarse one's domain: half the spacing, same axes and origin.
  FieldGeometry fine = coarse;
  fine.dims = {15, 13, 11};
  for (int r = 0; r < 3; ++r)
    for (int a = 0; a < 3; ++a) fine.voxel_to_world[4 * r + a] *= 0.5;
  const DisplacementField resampled = resample_field(view_of(f), fine);
  EXPECT_LT(max_difference(resampled, affine_as_field(affine, fine)), 1e-4);
  // One voxel beyond the coarse grid's last plane: zero, as sampling beyond a field is.
  fine.dims = {17, 13, 11};
  const DisplacementField beyond = resample_field(view_of(f), fine);
  EXPECT_EQ(norm(stored(beyond, 16)), 0.0);
}

TEST(FieldInverse, ComposesWithTheFieldToWithinTheSolverTolerance) {
  const FieldGeometry geometry = oblique_grid(40, 40, 32);
  const DisplacementField u = six_mm_warp(geometry).displacement;
  InverseOptions options;
  // The worst voxels converge slowly (max residual 1e-2 mm after 50 iterations, 6e-5 after
  // 100; the mean is below 1e-6 after 50).
  options.max_iterations = 100;
  options.max_residual_mm = 0.001;
  const InverseResult inv = invert_displacement_field(view_of(u), options);
  ASSERT_TRUE(inv.converged) << "max residual " << inv.max_residual_mm << " mm after " << inv.iterations;
  EXPECT_LE(inv.max_residual_mm, options.max_residual_mm);
  EXPECT_LE(inv.mean_residual_mm, inv.max_residual_mm);
  // Checked independently: "inverse then u" maps every grid point back onto itself.
  const double solved_side = max_displacement_mm(compose_first_then_second(view_of(inv.inverse), view_of(u)));
  EXPECT_LE(solved_side, options.max_residual_mm + 1e-5);
  // "u then inverse" is not what the iteration solves: it samples the inverse between grid
  // points, so it is zero only up to trilinear interpolation error, largest where u compresses
  // (measured: max 0.18 mm, mean 0.030 mm, on 2-2.5 mm voxels).
  const DisplacementField other = compose_first_then_second(view_of(u), view_of(inv.inverse));
  const double other_side = max_displacement_mm(other);
  double other_sum = 0;
  for (std::size_t i = 0; i < other.vectors.size() / 3; ++i) other_sum += norm(stored(other, i));
  const double other_mean = other_sum / double(other.vectors.size() / 3);
  EXPECT_LT(other_side, 0.25);
  EXPECT_LT(other_mean, 0.05);
  RecordProperty("iterations", inv.iterations);
  RecordProperty("max_residual_mm", std::to_string(inv.max_residual_mm));
  RecordProperty("mean_residual_mm", std::to_string(inv.mean_residual_mm));
  RecordProperty("u_then_inverse_max_mm", std::to_string(other_side));
  std::printf("6 mm field, 40x40x32: %d iterations, residual max %.2e mean %.2e mm; "
              "u then inverse max %.3f mean %.4f mm\n",
              inv.iterations, inv.max_residual_mm, inv.mean_residual_mm, other_side, other_mean);
}

TEST(FieldInverse, StopsAtMaxIterationsAndSaysItDidNotConverge) {
  const FieldGeometry geometry = oblique_grid(24, 22, 20);
  const DisplacementField u = six_mm_warp(geometry).displacement;
  InverseOptions options;
  options.max_iterations = 1;
  const InverseResult inv = invert_displacement_field(view_of(u), options);
  EXPECT_FALSE(inv.converged);
  EXPECT_EQ(inv.iterations, 1);
  EXPECT_GT(inv.max_residual_mm, 0.01);
  options.max_iterations = -1;
  EXPECT_THROW(invert_displacement_field(view_of(u), options), rp::Error);
}

TEST(FieldInverse, StopsOnTheMeanResidualToleranceWhenThatIsMetFirst) {
  const FieldGeometry geometry = oblique_grid(24, 22, 20);
  const DisplacementField u = six_mm_warp(geometry).displacement;
  InverseOptions options;
  options.max_iterations = 100;
  options.max_residual_mm = 1e-6;   // not reachable in 100 iterations
  options.mean_residual_mm = 0.01;  // reached after a few
  const InverseResult inv = invert_displacement_field(view_of(u), options);
  EXPECT_TRUE(inv.converged);
  EXPECT_LE(inv.mean_residual_mm, 0.01);
  EXPECT_GT(inv.max_residual_mm, 1e-6);
  EXPECT_LT(inv.iterations, 100);
  options.mean_residual_mm = -1.0;
  EXPECT_THROW(invert_displacement_field(view_of(u), options), rp::Error);
}

TEST(FieldInverse, MakesMinIterationsUpdatesEvenFromAGuessWithinTolerance) {
  const FieldGeometry geometry = oblique_grid(16, 15, 14);
  const DisplacementField u = six_mm_warp(geometry).displacement;
  InverseOptions options;
  options.max_residual_mm = 10.0;  // the zero guess is already within it
  EXPECT_EQ(invert_displacement_field(view_of(u), options).iterations, 0);
  options.min_iterations = 1;
  const InverseResult once = invert_displacement_field(view_of(u), options);
  EXPECT_EQ(once.iterations, 1);
  EXPECT_GT(max_displacement_mm(once.inverse), 1.0);
  options.min_iterations = -1;
  EXPECT_THROW(invert_displacement_field(view_of(u), options), rp::Error);
}

TEST(Jacobian, OfAnAffineDisplacementIsDetAEverywhereBordersIncluded) {
  const FieldGeometry geometry = oblique_grid(12, 11, 10);
  double a[16];
  rotation_about({0.6, 0.0, 0.8}, 0.3, grid_centre(geometry), a);
  const double stretch[3] = {1.2, 0.9, 1.1};  // det A = 1.188
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 3; ++col) a[4 * r + col] *= stretch[col];
  a[1] += 0.05;  // a shear as well
  const double det_a = a[0] * (a[5] * a[10] - a[6] * a[9]) - a[1] * (a[4] * a[10] - a[6] * a[8]) +
                       a[2] * (a[4] * a[9] - a[5] * a[8]);
  const JacobianDeterminants j = jacobian_determinants(view_of(affine_as_field(a, geometry)));
  // Float storage of displacements up to ~15 mm, differenced over 2 mm: ~1e-6 relative.
  EXPECT_NEAR(j.min, det_a, 1e-5);
  EXPECT_NEAR(j.max, det_a, 1e-5);
  EXPECT_EQ(j.fraction_negative, 0.0);
  // A reflection folds space: det -1 everywhere.
  const double mirror[16] = {-1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  const JacobianDeterminants folded = jacobian_determinants(view_of(affine_as_field(mirror, geometry)));
  EXPECT_NEAR(folded.max, -1.0, 1e-5);
  EXPECT_EQ(folded.fraction_negative, 1.0);
}

TEST(ScalingSquaring, SmallConstantVelocityGivesThatTranslation) {
  const FieldGeometry geometry = oblique_grid(16, 16, 12);
  const Vec3 t{0.3, -0.2, 0.1};
  const DisplacementField velocity = constant_field(geometry, t);
  const int squarings = squarings_for(velocity) + 4;
  const DisplacementField d = exponentiate_velocity(velocity, squarings);
  // The field is zero beyond its grid by convention, so the border planes see a shorter
  // translation; trilinear sampling carries that at most one voxel inward per squaring.
  EXPECT_LT(max_difference(d, velocity, interior(geometry.dims, squarings + 1)), 1e-5);
  EXPECT_GT(max_difference(d, velocity), 0.01);  // as the border shows
}

TEST(ScalingSquaring, RotationGeneratorGivesTheRotation) {
  // v(x) = W (x - c), W skew: the flow's time-1 map is the rotation exp(W) about c. Trilinear
  // sampling reproduces linear fields exactly, so what remains is the first-order step
  // (theta^2 r / 2^(N+1) ~ 1e-4 mm here) and float rounding.
  const FieldGeometry geometry = oblique_grid(32, 32, 26);
  const Vec3 c = grid_centre(geometry), n{1.0 / 3, 2.0 / 3, 2.0 / 3};
  const double theta = 0.2;
  DisplacementField velocity = zero_field(geometry);
  const Grid& g = geometry.dims;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const Vec3 r = world_of_voxel(geometry, x, y, z) - c;
        const Vec3 w{n.y * r.z - n.z * r.y, n.z * r.x - n.x * r.z, n.x * r.y - n.y * r.x};  // n x r
        const std::size_t i = x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z);
        for (int k = 0; k < 3; ++k) velocity.vectors[3 * i + k] = float(theta * (&w.x)[k]);
      }
  const DisplacementField d = exponentiate_velocity(velocity, 12);
  double rotation[16];
  rotation_about(n, theta, c, rotation);
  // Points within 20 mm of the centre stay on the grid along their whole circular path.
  const auto near_centre = [&](int x, int y, int z) { return norm(world_of_voxel(geometry, x, y, z) - c) < 20.0; };
  EXPECT_LT(max_difference(d, affine_as_field(rotation, geometry), near_centre), 1e-3);
}

// A smooth phantom: a product of cosines with a period of 80 mm, range 100.
std::vector<float> cosine_phantom(const FieldGeometry& g) {
  std::vector<float> image(voxel_count(g.dims));
  for (int z = 0; z < g.dims.nz; ++z)
    for (int y = 0; y < g.dims.ny; ++y)
      for (int x = 0; x < g.dims.nx; ++x) {
        const Vec3 p = world_of_voxel(g, x, y, z);
        const double k = 2 * M_PI / 80.0;
        image[x + std::size_t(g.dims.nx) * (y + std::size_t(g.dims.ny) * z)] =
            float(100 + 50 * std::cos(k * p.x) * std::cos(k * p.y) * std::cos(k * p.z));
      }
  return image;
}

rp_image image_view(const FieldGeometry& g, const std::vector<float>& data) {
  rp_image view{sizeof(rp_image), {uint32_t(g.dims.nx), uint32_t(g.dims.ny), uint32_t(g.dims.nz)}, {}, data.data()};
  std::copy(g.voxel_to_world, g.voxel_to_world + 16, view.voxel_to_world);
  return view;
}

TEST(WarpImage, ThroughExpVThenExpMinusVReturnsTheImage) {
  const FieldGeometry geometry = oblique_grid(40, 40, 32);
  RandomDiffeomorphismOptions options;
  options.seed = 11;
  options.smoothing_sigma_voxels = 5.0;
  options.max_displacement_mm = 4.0;
  const RandomDiffeomorphism warp = random_smooth_diffeomorphism(geometry, options);
  DisplacementField minus_v = warp.velocity;
  for (float& c : minus_v.vectors) c = -c;
  const DisplacementField back = exponentiate_velocity(minus_v, warp.squarings);

  const std::vector<float> image = cosine_phantom(geometry);
  const std::vector<float> warped = warp_image(image_view(geometry, image), view_of(warp.displacement), geometry, -1.f);
  const std::vector<float> restored = warp_image(image_view(geometry, warped), view_of(back), geometry, -1.f);
  double worst = 0, moved = 0;
  for (std::size_t i = 0; i < image.size(); ++i) {
    worst = std::max(worst, double(std::fabs(restored[i] - image[i])));
    moved = std::max(moved, double(std::fabs(warped[i] - image[i])));
  }
  // Bound: two trilinear resamplings each err by at most sum_axes h^2/8 |f''| = (4 + 4 + 6.25) / 8
  // * 50 (2 pi / 80)^2 = 0.55, and exp(-v) inverts exp(v) to ~0.06 mm (trilinear squaring)
  // times a slope of at most 50 (2 pi / 80) sqrt(3) = 6.8 per mm: 1.5 in all. One way, the
  // 4 mm warp moves intensities by far more (measured 6.3).
  EXPECT_GT(moved, 5.0);
  EXPECT_LT(worst, 1.5);
  std::printf("4 mm warp there and back: worst intensity error %.3f of range 100 (one way: %.1f)\n", worst, moved);
}

TEST(RandomDiffeomorphism, ReachesTheAskedMaxDisplacementWithoutFolding) {
  const FieldGeometry geometry = oblique_grid(40, 40, 32);
  for (const double asked : {4.0, 6.0, 8.0}) {
    RandomDiffeomorphismOptions options;
    options.seed = 3;
    options.smoothing_sigma_voxels = 5.0;
    options.max_displacement_mm = asked;
    const RandomDiffeomorphism warp = random_smooth_diffeomorphism(geometry, options);
    EXPECT_NEAR(max_displacement_mm(warp.displacement), asked, 1e-3 * asked);
    const JacobianDeterminants j = jacobian_determinants(view_of(warp.displacement));
    EXPECT_GT(j.min, 0.0) << asked << " mm";
    EXPECT_EQ(j.fraction_negative, 0.0);
    std::printf("%.0f mm: Jacobian %.3f..%.3f, %d squarings\n", asked, j.min, j.max, warp.squarings);
  }
}

TEST(RandomDiffeomorphism, IsFixedBySeedAndZeroOnTheBorder) {
  const FieldGeometry geometry = oblique_grid(20, 18, 16);
  const DisplacementField a = six_mm_warp(geometry, 5).velocity, b = six_mm_warp(geometry, 5).velocity;
  EXPECT_EQ(a.vectors, b.vectors);
  EXPECT_GT(max_difference(a, six_mm_warp(geometry, 6).velocity), 1.0);
  const Grid& g = geometry.dims;
  const auto on_border = [&](int x, int y, int z) { return !interior(g, 1)(x, y, z); };
  EXPECT_EQ(max_difference(a, zero_field(geometry), on_border), 0.0);
}

TEST(FieldOperations, GiveTheSameBitsSerialAndParallel) {
  const FieldGeometry geometry = oblique_grid(24, 22, 20);
  RandomDiffeomorphismOptions options;
  const RandomDiffeomorphism p = random_smooth_diffeomorphism(geometry, options, Execution::parallel);
  const RandomDiffeomorphism s = random_smooth_diffeomorphism(geometry, options, Execution::serial);
  EXPECT_EQ(p.displacement.vectors, s.displacement.vectors);
  const DisplacementFieldView u = view_of(p.displacement);
  EXPECT_EQ(compose_first_then_second(u, u, Execution::parallel).vectors,
            compose_first_then_second(u, u, Execution::serial).vectors);
  DisplacementField smooth_p = p.displacement, smooth_s = p.displacement;
  smooth_field_gaussian(smooth_p, 1.5, Execution::parallel);
  smooth_field_gaussian(smooth_s, 1.5, Execution::serial);
  EXPECT_EQ(smooth_p.vectors, smooth_s.vectors);
  const InverseResult ip = invert_displacement_field(u, {}, nullptr, Execution::parallel);
  const InverseResult is = invert_displacement_field(u, {}, nullptr, Execution::serial);
  EXPECT_EQ(ip.inverse.vectors, is.inverse.vectors);
  EXPECT_EQ(ip.mean_residual_mm, is.mean_residual_mm);
  const JacobianDeterminants jp = jacobian_determinants(u, Execution::parallel);
  const JacobianDeterminants js = jacobian_determinants(u, Execution::serial);
  EXPECT_EQ(jp.per_voxel, js.per_voxel);
  const std::vector<float> image = cosine_phantom(geometry);
  EXPECT_EQ(warp_image(image_view(geometry, image), u, geometry, 0.f, Execution::parallel),
            warp_image(image_view(geometry, image), u, geometry, 0.f, Execution::serial));
}

}  // namespace
}  // namespace regpipe_common
