// Each cpu.* measure on images small enough to compute by hand (values in the comments).
#include "cost_cpu_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace regpipe::test {
namespace {

const Eigen::Matrix4d kIdentity = Eigen::Matrix4d::Identity();

// 4x1x1 images on the same 1 mm grid: the identity transform samples voxel values exactly.
Image row(const std::vector<float>& values) { return make_image({4, 1, 1}, values); }

double cost_of(const std::string& id, const std::map<std::string, std::string>& params,
               const Image& ref, const Image& mov, const Eigen::Matrix4d& transform,
               double* overlap = nullptr, const Image* ref_weight = nullptr,
               const Image* mov_weight = nullptr) {
  auto cost = make_cost(id, params);
  cost->set_reference(ref, ref_weight);
  cost->set_moving(mov, mov_weight);
  return evaluate_one(*cost, transform, overlap);
}

TEST(CostCpuHandComputed, CorrelationRatio) {
  // X = 0 0 10 10 in 2 bins: {0, 0} -> bin 0, {10, 10} -> bin 1. Y = 1 3 5 9.
  // Bin 0: Y = 1, 3, mean 2, N var = 1 + 1 = 2. Bin 1: Y = 5, 9, mean 7, N var = 4 + 4 = 8.
  // All: mean 4.5, N var = 12.25 + 2.25 + 0.25 + 20.25 = 35. 1 - eta = (2 + 8) / 35 = 2/7.
  double overlap = 0.0;
  EXPECT_NEAR(cost_of("cpu.cr", {{"bins", "2"}}, row({0, 0, 10, 10}), row({1, 3, 5, 9}), kIdentity,
                      &overlap),
              2.0 / 7.0, 1e-15);
  EXPECT_EQ(overlap, 1.0);
}

TEST(CostCpuHandComputed, MutualInformationAndNmi) {
  // R = 0 0 10 10, M = 0 10 10 10, 2 bins each. Joint p: (0,0) 1/4, (0,1) 1/4, (1,1) 1/2.
  // H(R) = ln 2; H(M) = -(1/4 ln 1/4 + 3/4 ln 3/4) = 2 ln 2 - 3/4 ln 3; H(R,M) = 3/2 ln 2.
  // MI = 3/2 ln 2 - 3/4 ln 3 = 3/4 ln(4/3); NMI = (3 ln 2 - 3/4 ln 3) / (3/2 ln 2).
  const Image ref = row({0, 0, 10, 10}), mov = row({0, 10, 10, 10});
  const double ln2 = std::log(2.0), ln3 = std::log(3.0);
  EXPECT_NEAR(cost_of("cpu.mi", {{"bins", "2"}}, ref, mov, kIdentity), -0.75 * std::log(4.0 / 3.0),
              1e-15);
  EXPECT_NEAR(cost_of("cpu.nmi", {{"bins", "2"}}, ref, mov, kIdentity),
              -(3.0 * ln2 - 0.75 * ln3) / (1.5 * ln2), 1e-15);
}

TEST(CostCpuHandComputed, MutualInformationHalfVoxelShiftWithAndWithoutPartialVolume) {
  // R = M = 0 0 10 10, moving sampled at x + 0.5: positions 0.5 1.5 2.5 (3.5 is outside).
  // Trilinear: values 0 5 10 -> M bins 0 1 1 (5 * 2/10 = 1), R bins 0 0 1.
  //   Joint counts (0,0) 1, (0,1) 1, (1,1) 1: H(R) = H(M) = ln 3 - 2/3 ln 2, H(R,M) = ln 3,
  //   MI = ln 3 - 4/3 ln 2.
  // Partial volume: 0.5 -> half to voxels 0 and 1 (bins 0, 0); 1.5 -> voxels 1, 2 (bins 0, 1);
  //   2.5 -> voxels 2, 3 (bins 1, 1). Joint (0,0) 1.5, (0,1) 0.5, (1,1) 1 of 3:
  //   H(R) = ln 3 - 2/3 ln 2, H(M) = ln 2, H(R,M) = 2/3 ln 2 + 1/2 ln 3, MI = 1/2 ln 3 - 1/3 ln 2.
  const Image image = row({0, 0, 10, 10});
  const Eigen::Matrix4d shift = translation(0.5, 0, 0);
  const double ln2 = std::log(2.0), ln3 = std::log(3.0);
  double overlap = 0.0;
  EXPECT_NEAR(cost_of("cpu.mi", {{"bins", "2"}}, image, image, shift, &overlap),
              -(ln3 - 4.0 / 3.0 * ln2), 1e-15);
  EXPECT_EQ(overlap, 0.75);
  EXPECT_NEAR(cost_of("cpu.mi", {{"bins", "2"}, {"partial_volume", "true"}}, image, image, shift),
              -(0.5 * ln3 - ln2 / 3.0), 1e-15);
}

TEST(CostCpuHandComputed, NormalisedCrossCorrelation) {
  // X = 1 2 3 4 (deviations -1.5 -0.5 0.5 1.5), Y = 2 4 5 9 (deviations -3 -1 0 4).
  // sum dx dy = 4.5 + 0.5 + 0 + 6 = 11, sum dx^2 = 5, sum dy^2 = 26: NCC = 11 / sqrt(130).
  EXPECT_NEAR(cost_of("cpu.ncc", {}, row({1, 2, 3, 4}), row({2, 4, 5, 9}), kIdentity),
              1.0 - 11.0 / std::sqrt(130.0), 1e-15);
  // Y = -X is perfectly anti-correlated: the worst overlapping value, 2.
  EXPECT_NEAR(cost_of("cpu.ncc", {}, row({1, 2, 3, 4}), row({-1, -2, -3, -4}), kIdentity), 2.0,
              1e-15);
}

TEST(CostCpuHandComputed, LeastSquares) {
  // Differences -1 -2 -2 -5: (1 + 4 + 4 + 25) / 4 = 8.5.
  EXPECT_DOUBLE_EQ(cost_of("cpu.ls", {}, row({1, 2, 3, 4}), row({2, 4, 5, 9}), kIdentity), 8.5);
  // Reference weights 1 1 0.5 0: (1 + 4 + 0.5 * 4) / 2.5 = 2.8; all weight maps inside.
  const Image weight = row({1, 1, 0.5f, 0});
  double overlap = 0.0;
  EXPECT_DOUBLE_EQ(
      cost_of("cpu.ls", {}, row({1, 2, 3, 4}), row({2, 4, 5, 9}), kIdentity, &overlap, &weight),
      2.8);
  EXPECT_EQ(overlap, 1.0);
}

TEST(CostCpuHandComputed, OverlapCountsTheMovingWeight) {
  // Reference weights 1 1 0.5 0.5 (total 3), moving weights 1 0 0 1, identity: the samples
  // weigh 1 0 0 0.5 and the overlap is (1 + 0.5) / 3 = 0.5; LS (1 + 0.5 * 25) / 1.5 = 9.
  // A reference voxel inside the moving grid where the moving image weighs nothing is not
  // compared, so it does not count as overlap (what keeps registration.min_overlap meaningful
  // with head_weight_mm, docs/cr-real-pair.md).
  const Image ref_weight = row({1, 1, 0.5f, 0.5f}), mov_weight = row({1, 0, 0, 1});
  double overlap = 0.0;
  EXPECT_DOUBLE_EQ(cost_of("cpu.ls", {}, row({1, 2, 3, 4}), row({2, 4, 5, 9}), kIdentity, &overlap,
                           &ref_weight, &mov_weight),
                   9.0);
  EXPECT_EQ(overlap, 0.5);
}

TEST(CostCpuHandComputed, LeastSquaresThroughWorldGeometry) {
  // Moving voxels are 2 mm wide: reference voxel i (world x = i) is moving voxel i/2, so the
  // samples are 0 4 8 of M = 0 8 at 0, 0.5, 1; voxel 3 (1.5) is outside. R = 0 4 8 100.
  Eigen::Matrix4d two_mm = Eigen::Matrix4d::Identity();
  two_mm(0, 0) = 2.0;
  const Image mov = make_image({2, 1, 1}, {0, 8}, two_mm);
  double overlap = 0.0;
  EXPECT_EQ(cost_of("cpu.ls", {}, row({0, 4, 8, 100}), mov, kIdentity, &overlap), 0.0);
  EXPECT_EQ(overlap, 0.75);
  // Shifted by half a reference voxel (+0.5 mm): positions 0.25, 0.75, 1.25 (out), samples
  // 2 and 6 against R = 0 4: (4 + 4) / 2 = 4.
  EXPECT_DOUBLE_EQ(cost_of("cpu.ls", {}, row({0, 4, 8, 100}), mov, translation(0.5, 0, 0)), 4.0);
}

TEST(CostCpuHandComputed, BorderWeightingRampsToTheMovingEdge) {
  // border_mm = 2 on a 4-voxel 1 mm moving row: positions 0 1 2 3 are 0 1 1 0 mm from the
  // edge, weights 0 0.5 0.5 0. LS with differences -1 -2 -2 -5: (0.5*4 + 0.5*4) / 1 = 4.
  double overlap = 0.0;
  EXPECT_DOUBLE_EQ(cost_of("cpu.ls", {{"border_mm", "2"}}, row({1, 2, 3, 4}), row({2, 4, 5, 9}),
                           kIdentity, &overlap),
                   4.0);
  EXPECT_EQ(overlap, 1.0);  // overlap counts reference weight, not the fuzzy edge
}

TEST(CostCpuHandComputed, NearestNeighbourSampling) {
  // Shift +0.4: positions 0.4 1.4 2.4 -> voxels 0 1 2; 3.4 is outside. M = 2 4 5 9 against
  // R = 1 2 3: differences -1 -2 -2, LS = 9 / 3 = 3. Shift +0.6 rounds up: 4 5 9 vs 1 2 3 ->
  // (9 + 9 + 36) / 3 = 18.
  const Image ref = row({1, 2, 3, 4}), mov = row({2, 4, 5, 9});
  EXPECT_DOUBLE_EQ(
      cost_of("cpu.ls", {{"interpolation", "nearest"}}, ref, mov, translation(0.4, 0, 0)), 3.0);
  EXPECT_DOUBLE_EQ(
      cost_of("cpu.ls", {{"interpolation", "nearest"}}, ref, mov, translation(0.6, 0, 0)), 18.0);
}

}  // namespace
}  // namespace regpipe::test
