// The 12-parameter affine of abi.h, its inverse decomposition and the geometry helpers.
#include <regpipe/host/error.hpp>
#include <regpipe/host/transform.hpp>

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

using regpipe::AffineParams;
using regpipe::Image;
using regpipe::matrix_to_params;
using regpipe::params_to_matrix;
using regpipe::UserError;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Written out element by element (right-handed, angle in radians): independent of the
// library's use of Eigen::AngleAxis.
Eigen::Matrix3d rot_x(double a) {
  Eigen::Matrix3d m;
  m << 1, 0, 0, 0, std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a);
  return m;
}
Eigen::Matrix3d rot_y(double a) {
  Eigen::Matrix3d m;
  m << std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a);
  return m;
}
Eigen::Matrix3d rot_z(double a) {
  Eigen::Matrix3d m;
  m << std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a), 0, 0, 0, 1;
  return m;
}

AffineParams make_params(double rx, double ry, double rz, double tx, double ty, double tz,
                         double sx, double sy, double sz, double kxy, double kxz, double kyz) {
  return {rx, ry, rz, tx, ty, tz, sx, sy, sz, kxy, kxz, kyz};
}

double wrapped_angle_difference(double a, double b) {
  return std::abs(std::remainder(a - b, 2.0 * kPi));
}

Image grid(std::array<uint32_t, 3> dims, const Eigen::Matrix4d& v2w, float fill) {
  Image image;
  image.dims = dims;
  image.voxel_to_world = v2w;
  image.data.assign(image.voxel_count(), fill);
  return image;
}

}  // namespace

TEST(Transform, IdentityParamsGiveTheIdentity) {
  EXPECT_TRUE(params_to_matrix(regpipe::identity_params(), {3, -4, 5}).isIdentity(0.0));
}

TEST(Transform, ParamsToMatrixFollowsTheAbiFormula) {
  const AffineParams p = make_params(0.1, -0.2, 0.3, 4, -5, 6, 1.1, 0.9, 1.3, 0.05, -0.04, 0.03);
  const Eigen::Vector3d c(10, -20, 30);
  Eigen::Matrix3d k;
  k << 1, 0.05, -0.04, 0, 1, 0.03, 0, 0, 1;
  const Eigen::Matrix3d a =
      rot_z(0.3) * rot_y(-0.2) * rot_x(0.1) * k * Eigen::Vector3d(1.1, 0.9, 1.3).asDiagonal();
  const Eigen::Matrix4d m = params_to_matrix(p, c);
  for (const Eigen::Vector3d x : {Eigen::Vector3d(0, 0, 0), Eigen::Vector3d(-7, 13, 2.5)}) {
    const Eigen::Vector3d expected = a * (x - c) + c + Eigen::Vector3d(4, -5, 6);
    EXPECT_LT(((m * x.homogeneous()).head<3>() - expected).norm(), 1e-12);
  }
  EXPECT_TRUE(m.row(3).isApprox(Eigen::RowVector4d(0, 0, 0, 1)));
}

TEST(Transform, QuarterTurnAboutZMapsXOntoY) {
  AffineParams p = regpipe::identity_params();
  p[2] = kPi / 2;
  const Eigen::Matrix4d m = params_to_matrix(p, Eigen::Vector3d::Zero());
  EXPECT_LT(((m * Eigen::Vector4d(1, 0, 0, 1)) - Eigen::Vector4d(0, 1, 0, 1)).norm(), 1e-15);
}

TEST(Transform, RoundTripRecoversParametersInThePrincipalRange) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> angle(-kPi + 1e-6, kPi - 1e-6), tilt(-1.5, 1.5),
      shift(-50, 50), scale(0.5, 2.0), skew(-0.4, 0.4);
  const Eigen::Vector3d c(12.5, -30, 4);
  for (int trial = 0; trial < 2000; ++trial) {
    const AffineParams p =
        make_params(angle(rng), tilt(rng), angle(rng), shift(rng), shift(rng), shift(rng),
                    scale(rng), scale(rng), scale(rng), skew(rng), skew(rng), skew(rng));
    const AffineParams q = matrix_to_params(params_to_matrix(p, c), c);
    for (int i = 0; i < 3; ++i) ASSERT_LT(wrapped_angle_difference(p[i], q[i]), 1e-9) << trial;
    for (int i = 3; i < 12; ++i) ASSERT_NEAR(p[i], q[i], 1e-9) << "trial " << trial << " i " << i;
  }
}

TEST(Transform, RoundTripRebuildsTheMatrixForAnyRotation) {
  // Angles up to +-180 degrees about every axis: with |ry| > 90 degrees the Euler angles
  // are not unique, so the rebuilt matrix is compared.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> angle(-kPi, kPi), shift(-80, 80), scale(0.6, 1.7),
      skew(-0.3, 0.3);
  const Eigen::Vector3d c(-3, 8, 21);
  for (int trial = 0; trial < 2000; ++trial) {
    const AffineParams p =
        make_params(angle(rng), angle(rng), angle(rng), shift(rng), shift(rng), shift(rng),
                    scale(rng), scale(rng), scale(rng), skew(rng), skew(rng), skew(rng));
    const Eigen::Matrix4d m = params_to_matrix(p, c);
    const AffineParams q = matrix_to_params(m, c);
    ASSERT_LT((params_to_matrix(q, c) - m).cwiseAbs().maxCoeff(), 1e-9) << trial;
    ASSERT_LE(std::abs(q[1]), kPi / 2 + 1e-12);
    for (int i = 6; i < 12; ++i) ASSERT_NEAR(p[i], q[i], 1e-9) << "trial " << trial << " i " << i;
  }
}

TEST(Transform, GimbalLockStillRebuildsTheMatrix) {
  for (double ry : {kPi / 2, -kPi / 2, kPi / 2 - 1e-9, -kPi / 2 + 1e-7}) {
    for (double rx : {0.0, 0.7, -2.9}) {
      const AffineParams p = make_params(rx, ry, -1.1, 1, 2, 3, 1.2, 0.8, 1.0, 0.1, 0.0, -0.2);
      const Eigen::Matrix4d m = params_to_matrix(p, Eigen::Vector3d(5, 5, 5));
      const AffineParams q = matrix_to_params(m, Eigen::Vector3d(5, 5, 5));
      EXPECT_LT((params_to_matrix(q, Eigen::Vector3d(5, 5, 5)) - m).cwiseAbs().maxCoeff(), 1e-9)
          << "rx " << rx << " ry " << ry;
      EXPECT_TRUE(std::isfinite(q[0]) && std::isfinite(q[2]));
    }
  }
}

TEST(Transform, MatrixToParamsRefusesReflectionsAndSingularMatrices) {
  Eigen::Matrix4d mirror = Eigen::Matrix4d::Identity();
  mirror(0, 0) = -1;
  EXPECT_THROW(matrix_to_params(mirror, Eigen::Vector3d::Zero()), UserError);
  Eigen::Matrix4d flat = Eigen::Matrix4d::Identity();
  flat(2, 2) = 0;
  EXPECT_THROW(matrix_to_params(flat, Eigen::Vector3d::Zero()), UserError);
}

TEST(Transform, CentreOfMassWeightsByPositiveIntensity) {
  Eigen::Matrix4d v2w = Eigen::Matrix4d::Identity();
  v2w.diagonal().head<3>() = Eigen::Vector3d(2, 3, 4);
  v2w.topRightCorner<3, 1>() = Eigen::Vector3d(-10, 0, 5);
  Image image = grid({4, 3, 2}, v2w, 0.0f);
  image.data[1 + 4 * (2 + 3 * 1)] = 3.0f;  // voxel (1,2,1) -> world (-8, 6, 9)
  image.data[3] = 1.0f;                    // voxel (3,0,0) -> world (-4, 0, 5)
  image.data[5] = -100.0f;                 // negative: ignored
  const Eigen::Vector3d expected =
      (3.0 * Eigen::Vector3d(-8, 6, 9) + Eigen::Vector3d(-4, 0, 5)) / 4.0;
  EXPECT_LT((regpipe::centre_of_mass(image) - expected).norm(), 1e-12);
}

TEST(Transform, CentreOfMassOfAnEmptyImageIsTheGridCentre) {
  Eigen::Matrix4d v2w = Eigen::Matrix4d::Identity();
  v2w.topRightCorner<3, 1>() = Eigen::Vector3d(1, 2, 3);
  const Image image = grid({5, 4, 3}, v2w, 0.0f);
  EXPECT_LT((regpipe::centre_of_mass(image) - Eigen::Vector3d(3, 3.5, 4)).norm(), 1e-12);
}

TEST(Transform, MeanDisplacementOfATranslationIsItsLength) {
  const Image region = grid({4, 4, 4}, Eigen::Matrix4d::Identity(), 1.0f);
  Eigen::Matrix4d shifted = Eigen::Matrix4d::Identity();
  shifted.topRightCorner<3, 1>() = Eigen::Vector3d(3, 4, 0);
  EXPECT_NEAR(regpipe::mean_displacement_mm(shifted, Eigen::Matrix4d::Identity(), region, 0.5f),
              5.0, 1e-12);
}

TEST(Transform, MeanDisplacementCountsOnlyTheRegion) {
  // A half turn about z through the origin moves a point at radius r by 2r.
  Image region = grid({3, 1, 1}, Eigen::Matrix4d::Identity(), 0.0f);
  region.data = {0.0f, 2.0f, 5.0f};  // voxels at x = 1 and x = 2 are above 1
  const Eigen::Matrix4d half_turn =
      regpipe::rigid_about({0, 0, 1}, kPi, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero());
  EXPECT_NEAR(regpipe::mean_displacement_mm(half_turn, Eigen::Matrix4d::Identity(), region, 1.0f),
              (2.0 + 4.0) / 2.0, 1e-12);
  EXPECT_THROW(regpipe::mean_displacement_mm(half_turn, half_turn, region, 10.0f), UserError);
}

TEST(Transform, RigidAboutKeepsTheCentreAndRotatesAboutTheAxis) {
  const Eigen::Vector3d c(10, -5, 2), t(1, 2, 3);
  const Eigen::Matrix4d m = regpipe::rigid_about({0, 0, 2}, kPi / 2, c, t);
  EXPECT_LT(((m * c.homogeneous()).head<3>() - (c + t)).norm(), 1e-12);
  const Eigen::Vector3d moved = (m * (c + Eigen::Vector3d(1, 0, 0)).homogeneous()).head<3>();
  EXPECT_LT((moved - (c + t + Eigen::Vector3d(0, 1, 0))).norm(), 1e-12);

  // An oblique axis: a proper rotation that fixes the axis and turns by the angle.
  const Eigen::Vector3d axis = Eigen::Vector3d(1, -2, 0.5).normalized();
  const Eigen::Matrix4d oblique = regpipe::rigid_about(axis, 0.8, c, t);
  const Eigen::Matrix3d r = oblique.topLeftCorner<3, 3>();
  EXPECT_LT((r * r.transpose() - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(r.determinant(), 1.0, 1e-12);
  EXPECT_LT((r * axis - axis).norm(), 1e-12);
  EXPECT_NEAR(std::acos((r.trace() - 1) / 2), 0.8, 1e-12);
  const AffineParams p = matrix_to_params(oblique, c);
  EXPECT_NEAR(p[3], t.x(), 1e-12);
  EXPECT_NEAR(p[4], t.y(), 1e-12);
  EXPECT_NEAR(p[5], t.z(), 1e-12);
  EXPECT_THROW(regpipe::rigid_about(Eigen::Vector3d::Zero(), 1.0, c, t), UserError);
}
