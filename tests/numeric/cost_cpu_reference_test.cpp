// Every cpu.* measure against the independent plain implementation of cost_cpu_naive.cpp, on
// random images with oblique, anisotropic grids and 20 random affine transforms.
#include "cost_cpu_naive.hpp"
#include "cost_cpu_support.hpp"

#include <Eigen/Geometry>
#include <gtest/gtest.h>

#include <cmath>

namespace regpipe::test {
namespace {

struct Case {
  std::string name;
  NaiveOptions options;  // id, bins, nearest, border_mm, partial_volume (weights set below)
  bool weighted = false;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.name; }

NaiveOptions options(const std::string& id, int bins, bool nearest, double border_mm,
                     bool partial_volume) {
  NaiveOptions o;
  o.id = id;
  o.bins = bins;
  o.nearest = nearest;
  o.border_mm = border_mm;
  o.partial_volume = partial_volume;
  return o;
}

std::map<std::string, std::string> params_of(const NaiveOptions& o) {
  std::map<std::string, std::string> p = {{"interpolation", o.nearest ? "nearest" : "trilinear"},
                                          {"border_mm", std::to_string(o.border_mm)},
                                          {"threads", "2"}};
  const bool histogram = o.id == "cpu.mi" || o.id == "cpu.nmi";
  if (histogram || o.id == "cpu.cr") p["bins"] = std::to_string(o.bins);
  if (histogram) p["partial_volume"] = o.partial_volume ? "true" : "false";
  return p;
}

// A voxel_to_world with anisotropic voxels, a small obliquity and an offset origin.
Eigen::Matrix4d oblique_grid(const Eigen::Vector3d& spacing, double angle,
                             const Eigen::Vector3d& origin) {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() =
      Eigen::AngleAxisd(angle, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix() *
      spacing.asDiagonal();
  m.topRightCorner<3, 1>() = origin;
  return m;
}

class CostCpuAgainstNaive : public ::testing::TestWithParam<Case> {};

TEST_P(CostCpuAgainstNaive, AgreesToOnePartInABillion) {
  const Case& c = GetParam();
  const Image ref =
      random_image({13, 11, 9}, oblique_grid({1.0, 1.2, 0.9}, 0.1, {-6, -6, -4}), 101);
  const Image mov =
      random_image({12, 12, 10}, oblique_grid({1.1, 0.95, 1.05}, -0.15, {-6.5, -5, -5}), 102);
  const Image ref_weight = random_weight(ref, 103), mov_weight = random_weight(mov, 104);
  NaiveOptions o = c.options;
  if (c.weighted) {
    o.ref_weight = &ref_weight;
    o.mov_weight = &mov_weight;
  }
  auto cost = make_cost(o.id, params_of(o));
  cost->set_reference(ref, o.ref_weight);
  cost->set_moving(mov, o.mov_weight);

  std::mt19937 rng(105);
  std::vector<Eigen::Matrix4d> transforms = {Eigen::Matrix4d::Identity()};
  while (transforms.size() < 20) transforms.push_back(random_affine(rng, grid_centre(ref)));
  const Evaluation got = evaluate(*cost, transforms);

  double min_overlap = 1.0;
  for (size_t i = 0; i < transforms.size(); ++i) {
    const NaiveResult want = naive_cost(ref, mov, transforms[i], o);
    EXPECT_NEAR(got.costs[i], want.cost, 1e-9 * std::max(1.0, std::fabs(want.cost)))
        << "transform " << i;
    EXPECT_NEAR(got.overlaps[i], want.overlap, 1e-12) << "transform " << i;
    min_overlap = std::min(min_overlap, want.overlap);
  }
  // The transforms must exercise the overlap rule: some voxels leave, most stay. With weights
  // the overlap also carries the moving weight (random in [0, 1]), about half of it.
  EXPECT_LT(min_overlap, 0.9);
  EXPECT_GT(min_overlap, c.weighted ? 0.1 : 0.2);
}

INSTANTIATE_TEST_SUITE_P(
    AllMeasures, CostCpuAgainstNaive,
    ::testing::Values(
        Case{"cr_trilinear", options("cpu.cr", 32, false, 0, false)},
        Case{"cr_nearest_weighted_border", options("cpu.cr", 20, true, 2.5, false), true},
        Case{"mi_trilinear", options("cpu.mi", 16, false, 0, false)},
        Case{"mi_partial_volume_weighted_border", options("cpu.mi", 16, false, 2.5, true), true},
        Case{"mi_nearest", options("cpu.mi", 12, true, 0, false)},
        Case{"nmi_trilinear", options("cpu.nmi", 16, false, 0, false)},
        Case{"nmi_partial_volume_weighted", options("cpu.nmi", 24, false, 0, true), true},
        Case{"ncc_trilinear", options("cpu.ncc", 0, false, 0, false)},
        Case{"ncc_nearest_weighted_border", options("cpu.ncc", 0, true, 2.5, false), true},
        Case{"ls_trilinear", options("cpu.ls", 0, false, 0, false)},
        Case{"ls_nearest_weighted_border", options("cpu.ls", 0, true, 2.5, false), true}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// Intensities of 1e6 + [0, 100): one-pass moments about 0 would lose about ten digits to
// cancellation; the plugin's moments about the image means must not.
TEST(CostCpuPrecision, LargeIntensityOffsetKeepsFullPrecision) {
  const Image ref = random_image({9, 8, 7}, Eigen::Matrix4d::Identity(), 111, 1e6f, 1e6f + 100.f);
  const Image mov = random_image({9, 8, 7}, translation(0.3, -0.2, 0.1), 112, 1e6f, 1e6f + 100.f);
  std::mt19937 rng(113);
  for (const std::string id : {"cpu.cr", "cpu.ncc"}) {
    auto cost = make_cost(id, {});
    cost->set_reference(ref, nullptr);
    cost->set_moving(mov, nullptr);
    for (int i = 0; i < 5; ++i) {
      const Eigen::Matrix4d t = random_affine(rng, grid_centre(ref));
      NaiveOptions o;
      o.id = id;
      o.bins = 256;
      const double want = naive_cost(ref, mov, t, o).cost;
      EXPECT_NEAR(evaluate_one(*cost, t), want, 1e-9 * std::fabs(want)) << id;
    }
  }
}

// Zero-weight moving voxels far outside the weighted intensity range still reach samples
// through interpolation; their bins are the end bins.
TEST(CostCpuPrecision, SamplesBeyondTheWeightedRangeFallIntoTheEndBins) {
  const Image ref = random_image({8, 8, 8}, Eigen::Matrix4d::Identity(), 121);
  Image mov = random_image({8, 8, 8}, Eigen::Matrix4d::Identity(), 122);
  Image mov_weight = mov;
  std::fill(mov_weight.data.begin(), mov_weight.data.end(), 1.f);
  for (size_t i = 0; i < mov.data.size(); i += 5) {
    mov.data[i] = i % 2 == 0 ? 1e12f : -1e12f;
    mov_weight.data[i] = 0.f;
  }
  std::mt19937 rng(123);
  for (const std::string id : {"cpu.mi", "cpu.nmi"}) {
    auto cost = make_cost(id, {{"bins", "16"}});
    cost->set_reference(ref, nullptr);
    cost->set_moving(mov, &mov_weight);
    NaiveOptions o;
    o.id = id;
    o.bins = 16;
    o.mov_weight = &mov_weight;
    for (int i = 0; i < 5; ++i) {
      const Eigen::Matrix4d t = random_affine(rng, grid_centre(ref));
      const double want = naive_cost(ref, mov, t, o).cost;
      EXPECT_NEAR(evaluate_one(*cost, t), want, 1e-9 * std::fabs(want)) << id;
    }
  }
}

}  // namespace
}  // namespace regpipe::test
