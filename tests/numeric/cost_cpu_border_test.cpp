// border_mm: as the moving image's edge sweeps across reference voxels, the fuzzy edge makes
// the cost continuous (steps shrink with the step size), while without it each voxel that
// leaves makes the cost jump. (That border_mm = 0 is the plain, unweighted definition is
// checked against the naive implementation in cost_cpu_reference_test.cpp.)
#include "cost_cpu_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace regpipe::test {
namespace {

// Largest |cost(t + h) - cost(t)| over translations t in [-0.5, 0.5] voxel along x, where
// t = 0 is the moment the last reference column reaches the moving image's edge.
double largest_step(CostInstance& cost, double h) {
  std::vector<Eigen::Matrix4d> transforms;
  const int steps = int(std::lround(1.0 / h));
  for (int i = 0; i <= steps; ++i) transforms.push_back(translation(-0.5 + i * h, 0, 0));
  const Evaluation e = evaluate(cost, transforms);
  double largest = 0.0;
  for (size_t i = 1; i < e.costs.size(); ++i)
    largest = std::max(largest, std::fabs(e.costs[i] - e.costs[i - 1]));
  return largest;
}

// Smooth intensities: the cost then changes slowly with t, and a voxel entering or leaving the
// overlap shows as a jump well above that change.
Image smooth_image(std::array<uint32_t, 3> dims, double phase) {
  std::vector<float> values;
  for (uint32_t z = 0; z < dims[2]; ++z)
    for (uint32_t y = 0; y < dims[1]; ++y)
      for (uint32_t x = 0; x < dims[0]; ++x)
        values.push_back(float(50.0 + 30.0 * std::sin(0.5 * x + 0.3 * y + phase) +
                               20.0 * std::cos(0.4 * z + 0.2 * x - phase)));
  return make_image(dims, values);
}

struct Sweep {
  // The reference reaches beyond the moving image's last x column (x = 11): under x + t its
  // column 11 leaves and column 0 enters as t crosses 0.
  Image ref = smooth_image({16, 6, 5}, 0.0);
  Image mov = smooth_image({12, 6, 5}, 0.7);
  double ratio(const std::string& id, std::map<std::string, std::string> params) const {
    auto cost = make_cost(id, params);
    cost->set_reference(ref, nullptr);
    cost->set_moving(mov, nullptr);
    return largest_step(*cost, 0.01) / largest_step(*cost, 0.001);
  }
};

const std::vector<std::pair<std::string, std::map<std::string, std::string>>> kContinuousMeasures =
    {
        {"cpu.cr", {{"bins", "16"}}},
        {"cpu.mi", {{"bins", "8"}, {"partial_volume", "true"}}},
        {"cpu.nmi", {{"bins", "8"}, {"partial_volume", "true"}}},
        {"cpu.ncc", {}},
        {"cpu.ls", {}},
};

TEST(CostCpuBorder, FuzzyEdgeMakesTheCostContinuous) {
  const Sweep sweep;
  for (auto [id, params] : kContinuousMeasures) {
    params["border_mm"] = "2";
    // Continuous: ten times smaller steps give about ten times smaller differences.
    EXPECT_GT(sweep.ratio(id, params), 5.0) << id;
  }
}

TEST(CostCpuBorder, WithoutTheFuzzyEdgeTheCostJumps) {
  const Sweep sweep;
  for (const auto& [id, params] : kContinuousMeasures)
    // A jump stays the same size whatever the step (the negative control of the test above).
    EXPECT_LT(sweep.ratio(id, params), 2.0) << id;
}

}  // namespace
}  // namespace regpipe::test
