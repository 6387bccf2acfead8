// cpu.cr's head_weight_mm and the overlap it reports: a transform that keeps the reference
// inside the moving grid while the two heads do not meet must report (almost) no overlap, so
// that registration.min_overlap refuses it. Without this, FLIRT's search found such a
// transform on the synth_rot45 case and scored it a perfect CR (docs/cr-real-pair.md).
#include "cost_cpu_support.hpp"

#include <gtest/gtest.h>

namespace regpipe::test {
namespace {

constexpr uint32_t kN = 32;

// A bright textured cube ("head") of 10 voxels a side starting at x = x0, in air.
Image head_at(uint32_t x0) {
  std::vector<float> v(std::size_t(kN) * kN * kN, 0.f);
  for (uint32_t z = 11; z < 21; ++z)
    for (uint32_t y = 11; y < 21; ++y)
      for (uint32_t x = x0; x < x0 + 10; ++x) v[x + kN * (y + kN * z)] = 100.f + float((x * 7 + y * 3 + z) % 11);
  return make_image({kN, kN, kN}, v);
}

double overlap_at(const std::string& head_weight_mm, const Eigen::Matrix4d& transform) {
  auto cost = make_cost("cpu.cr", {{"bins", "16"}, {"head_weight_mm", head_weight_mm}});
  cost->set_reference(head_at(3), nullptr);
  cost->set_moving(head_at(19), nullptr);
  double overlap = -1.0;
  evaluate_one(*cost, transform, &overlap);
  return overlap;
}

TEST(CostCpuHeadWeight, OverlapCountsWhereBothHeadsMeet) {
  const Eigen::Matrix4d identity = Eigen::Matrix4d::Identity();
  // Identity: every reference voxel lies inside the moving grid, but the reference's head
  // (x 3-12) lands in the moving image's air (its head is at x 19-28).
  EXPECT_EQ(overlap_at("0", identity), 1.0);  // FLIRT's CR counts the grid
  EXPECT_LT(overlap_at("2", identity), 0.01);
  // Shifted onto the moving head (reference x -> x + 16): the heads meet. The weights' smooth
  // edges (sigma 2 mm, spread into the air around a 10 mm cube) keep the weighted overlap near
  // a half: sum(w^2) / sum(w) of the blurred cube, 0.4696 by scipy.ndimage.gaussian_filter
  // (sigma 2 voxels) of the cube's mask.
  EXPECT_NEAR(overlap_at("2", translation(16, 0, 0)), 0.4696, 0.02);
}

}  // namespace
}  // namespace regpipe::test
