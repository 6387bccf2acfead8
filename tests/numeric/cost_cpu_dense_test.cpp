// RP_EXT_DENSE_COST (abi.h 1.5) of cpu.ls, cpu.lcc and cpu.mattes through the plugin host:
// the cost and its gradient in LPS world mm on an oblique grid against finite differences of
// an analytic moving image and against regpipe_common's metric, cpu.lcc and cpu.mattes under
// affines, and the refusals.
#include "cost_cpu_support.hpp"

#include <regpipe_common/dense_metrics/image_gradient.hpp>
#include <regpipe_common/dense_metrics/mattes_mi.hpp>
#include <regpipe_common/dense_metrics/world_gradient.hpp>

#include <regpipe_common/fields/abi_views.hpp>

#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <cmath>
#include <limits>

namespace regpipe::test {
namespace {

// A 20x18x16 grid of 1.5 mm voxels, rotated about an oblique axis and shifted: the world
// gradient differs from the grid-axis one in every component.
Eigen::Matrix4d oblique_grid() {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() =
      Eigen::AngleAxisd(0.5, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix() * 1.5;
  m.topRightCorner<3, 1>() = Eigen::Vector3d(-14, -12, -10);
  return m;
}
constexpr uint32_t kNx = 20, kNy = 18, kNz = 16;

Eigen::Vector3d world_of(const Eigen::Matrix4d& v2w, std::size_t i) {
  const double x = double(i % kNx), y = double((i / kNx) % kNy), z = double(i / (kNx * kNy));
  return (v2w * Eigen::Vector4d(x, y, z, 1)).head<3>();
}

// Smooth analytic images (two contrasts of one blob layout), so that finite differences of
// the moving image's sampling point have an exact reference.
double fixed_at(const Eigen::Vector3d& p) {
  return 100 * std::exp(-(p - Eigen::Vector3d(3, -2, 1)).squaredNorm() / 60) +
         60 * std::exp(-(p - Eigen::Vector3d(-5, 4, -2)).squaredNorm() / 40);
}
double moving_at(const Eigen::Vector3d& p) {
  return 90 * std::exp(-(p - Eigen::Vector3d(3.8, -1.5, 0.4)).squaredNorm() / 55) +
         70 * std::exp(-(p - Eigen::Vector3d(-4.6, 4.5, -2.5)).squaredNorm() / 45) + 5;
}

struct DensePair {
  Eigen::Matrix4d v2w = oblique_grid();
  std::vector<float> fixed, moving;
  DensePair() {
    for (std::size_t i = 0; i < std::size_t(kNx) * kNy * kNz; ++i) {
      fixed.push_back(float(fixed_at(world_of(v2w, i))));
      moving.push_back(float(moving_at(world_of(v2w, i))));
    }
  }
  rp_dense_cost_request request(const std::vector<float>& mov, double* cost, float* gradient) const {
    regpipe_common::FieldGeometry grid{{int(kNx), int(kNy), int(kNz)}, {}};
    for (int k = 0; k < 16; ++k) grid.voxel_to_world[k] = v2w(k / 4, k % 4);
    return regpipe_common::dense_cost_request(grid, {fixed.data(), mov.data(), nullptr, cost, gradient});
  }
};

// d cost / d u at voxel i along world axis a by central differences of the moving image's
// sampling point, against the plugin's gradient: the world frame, sign and scale of the ABI.
void expect_world_gradient_matches_differences(const std::string& id,
                                               const std::map<std::string, std::string>& params) {
  const DensePair pair;
  auto cost = make_cost(id, params);
  ASSERT_TRUE(cost->offers_dense());
  double c0 = 0;
  std::vector<float> gradient(3 * pair.moving.size());
  cost->evaluate_dense(pair.request(pair.moving, &c0, gradient.data()));
  double largest = 0;
  for (float g : gradient) largest = std::max(largest, double(std::abs(g)));
  ASSERT_GT(largest, 0.0);
  int checked = 0;
  for (std::size_t i : {std::size_t(2 + kNx * (5 + kNy * 6)), std::size_t(9 + kNx * (8 + kNy * 7)),
                        std::size_t(12 + kNx * (10 + kNy * 9)), std::size_t(6 + kNx * (11 + kNy * 8))}) {
    for (int a = 0; a < 3; ++a) {
      const double h = 0.01;
      Eigen::Vector3d step = Eigen::Vector3d::Zero();
      step[a] = h;
      std::vector<float> plus = pair.moving, minus = pair.moving;
      plus[i] = float(moving_at(world_of(pair.v2w, i) + step));
      minus[i] = float(moving_at(world_of(pair.v2w, i) - step));
      double cp = 0, cm = 0;
      cost->evaluate_dense(pair.request(plus, &cp, nullptr));
      cost->evaluate_dense(pair.request(minus, &cm, nullptr));
      const double difference = (cp - cm) / (2 * h);
      // The plugin takes grad m by central differences of the 1.5 mm grid: a few % of the
      // largest component, far below a wrong frame or sign.
      EXPECT_NEAR(gradient[3 * i + a], difference, 0.05 * largest) << id << " voxel " << i << " axis " << a;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 12);
}

TEST(CostCpuDense, MeanSquaresGradientIsInWorldMillimetres) {
  expect_world_gradient_matches_differences("cpu.ls", {});
}

TEST(CostCpuDense, LocalCcExactGradientIsInWorldMillimetres) {
  expect_world_gradient_matches_differences("cpu.lcc", {{"radius", "2"}, {"gradient", "exact"}});
}

TEST(CostCpuDense, MattesGradientIsInWorldMillimetres) {
  expect_world_gradient_matches_differences("cpu.mattes", {});
  expect_world_gradient_matches_differences("cpu.mattes", {{"bins", "12"}});
}

// cpu.mattes is regpipe_common's Mattes MI (the one SyN's built-in metric runs) behind the
// ABI: the same cost and, turned into world mm by the same E^-T, the same gradient, bit for bit.
TEST(CostCpuDense, MattesIsCommonsMetricThroughTheAbi) {
  namespace dm = regpipe_common::dense_metrics;
  const DensePair pair;
  std::vector<float> mask(pair.fixed.size());
  for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = i % 7 == 3 ? 0.f : 1.f;
  double c = 0;
  std::vector<float> gradient(3 * pair.moving.size());
  rp_dense_cost_request r = pair.request(pair.moving, &c, gradient.data());
  r.fixed_mask = mask.data();
  make_cost("cpu.mattes", {{"bins", "24"}})->evaluate_dense(r);

  dm::DenseGrid grid{{int(kNx), int(kNy), int(kNz)}, {1.5, 1.5, 1.5}};
  const std::vector<float> moving_gradient = dm::central_difference_gradient(grid, pair.moving);
  const dm::DenseCostInput in{grid, pair.fixed, pair.moving, mask, moving_gradient};
  std::vector<double> grid_gradient(3 * pair.moving.size());
  const double expected = dm::mattes_mutual_information(in, dm::MattesOptions{24}, grid_gradient);
  std::vector<float> expected_world(grid_gradient.size());
  dm::grid_gradient_to_world(r.voxel_to_world, grid_gradient, expected_world);
  EXPECT_LT(expected, -0.1);  // the blobs share information
  EXPECT_EQ(c, expected);
  for (std::size_t k = 0; k < gradient.size(); ++k) ASSERT_EQ(gradient[k], expected_world[k]) << k;
  for (std::size_t i = 3; i < mask.size(); i += 7)
    for (int a = 0; a < 3; ++a) ASSERT_EQ(gradient[3 * i + a], 0.f) << "masked voxel " << i;
}

// Under an affine the moving image is resampled onto the reference grid (as cpu.lcc does): the
// identity gives common's metric of the pair itself; a second contrast that no monotonic map
// relates to the first (inverted, with a ripple) still registers: the identity beats shifts.
TEST(CostCpuDense, MattesUnderAffinesIsMultiModal) {
  namespace dm = regpipe_common::dense_metrics;
  const DensePair pair;
  Eigen::Matrix4d v2w = Eigen::Matrix4d::Identity();
  v2w.topLeftCorner<3, 3>() *= 1.5;
  std::vector<float> contrast(pair.fixed.size());
  for (std::size_t i = 0; i < contrast.size(); ++i)
    contrast[i] = float(200 - pair.fixed[i] + 25 * std::sin(pair.fixed[i] / 9.0));
  auto cost = make_cost("cpu.mattes");
  cost->set_reference(make_image({kNx, kNy, kNz}, pair.fixed, v2w), nullptr);
  cost->set_moving(make_image({kNx, kNy, kNz}, contrast, v2w), nullptr);
  double overlap = 0;
  const double at_identity = evaluate_one(*cost, Eigen::Matrix4d::Identity(), &overlap);
  EXPECT_DOUBLE_EQ(overlap, 1.0);
  const dm::DenseCostInput in{{{int(kNx), int(kNy), int(kNz)}, {1.5, 1.5, 1.5}}, pair.fixed, contrast, {}, {}};
  EXPECT_EQ(at_identity, dm::mattes_mutual_information(in, dm::MattesOptions{32}));
  for (const Eigen::Matrix4d& shift : {translation(2, 0, 0), translation(0, -2, 0), translation(0, 0, 3)}) {
    const double shifted = evaluate_one(*cost, shift, &overlap);
    EXPECT_GT(shifted, at_identity + 0.05);
    EXPECT_LT(overlap, 1.0);
  }
}

TEST(CostCpuDense, MattesRefusesTooFewBins) {
  try {
    make_cost("cpu.mattes", {{"bins", "4"}});
    FAIL() << "bins=4 accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bins"), std::string::npos) << e.what();
  }
}

TEST(CostCpuDense, MeanSquaresValueIsTheMeanSquaredDifference) {
  const DensePair pair;
  double expected = 0;
  for (std::size_t i = 0; i < pair.fixed.size(); ++i)
    expected += std::pow(double(pair.fixed[i]) - double(pair.moving[i]), 2);
  expected /= double(pair.fixed.size());
  double c = 0;
  make_cost("cpu.ls")->evaluate_dense(pair.request(pair.moving, &c, nullptr));
  EXPECT_NEAR(c, expected, 1e-9 * expected);
}

TEST(CostCpuDense, LocalCcOfAnImageWithItselfIsMinusOneUnderTheIdentity) {
  // An axis-aligned grid, so that the identity maps every voxel exactly onto itself (on the
  // oblique one, rounding puts border voxels a hair outside the sampling domain).
  const DensePair pair;
  Eigen::Matrix4d v2w = Eigen::Matrix4d::Identity();
  v2w.topLeftCorner<3, 3>() *= 1.5;
  const Image ref = make_image({kNx, kNy, kNz}, pair.fixed, v2w);
  auto cost = make_cost("cpu.lcc", {{"radius", "2"}});
  cost->set_reference(ref, nullptr);
  cost->set_moving(ref, nullptr);
  double overlap = 0;
  EXPECT_NEAR(evaluate_one(*cost, Eigen::Matrix4d::Identity(), &overlap), -1.0, 1e-9);
  EXPECT_DOUBLE_EQ(overlap, 1.0);
  // A 2 mm shift decorrelates the windows and leaves part of the grid.
  const double shifted = evaluate_one(*cost, translation(2, 0, 0), &overlap);
  EXPECT_GT(shifted, -0.99);
  EXPECT_LT(overlap, 1.0);
}

TEST(CostCpuDense, DeviceMemoryIsRefusedAsUnsupported) {
  const DensePair pair;
  double c = 0;
  rp_dense_cost_request r = pair.request(pair.moving, &c, nullptr);
  r.memory = RP_MEMORY_DEVICE;
  try {
    make_cost("cpu.lcc")->evaluate_dense(r);
    FAIL() << "device memory accepted";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("host memory"), std::string::npos) << e.what();
  }
}

TEST(CostCpuDense, NonFiniteMovingVoxelIsNamed) {
  const DensePair pair;
  std::vector<float> bad = pair.moving;
  bad[77] = std::numeric_limits<float>::quiet_NaN();
  double c = 0;
  try {
    make_cost("cpu.ls")->evaluate_dense(pair.request(bad, &c, nullptr));
    FAIL() << "NaN accepted";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("moving voxel 77"), std::string::npos) << e.what();
  }
}

TEST(CostCpuDense, HistogramCostsOfferNoDenseForm) {
  for (const char* id : {"cpu.cr", "cpu.mi", "cpu.nmi", "cpu.ncc"}) {
    auto cost = make_cost(id);
    EXPECT_FALSE(cost->offers_dense()) << id;
    const DensePair pair;
    double c = 0;
    EXPECT_THROW(cost->evaluate_dense(pair.request(pair.moving, &c, nullptr)), ComponentError) << id;
  }
}

}  // namespace
}  // namespace regpipe::test
