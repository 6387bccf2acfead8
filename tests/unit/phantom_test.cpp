// The synthetic head: deterministic, centred, without symmetries, with several tissues whose
// intensities map non-monotonically between contrasts; synthetic_contrast likewise.
#include <regpipe/host/error.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/transform.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

using regpipe::Image;
using regpipe::make_head_phantom;

namespace {

// 192 mm field of view at 4 mm: the whole head, small enough to be fast.
const std::array<uint32_t, 3> kDims{48, 48, 48};
constexpr double kVoxelMm = 4.0;

// The image with the chosen axes reversed; on a grid centred at the world origin this is the
// mirror through the origin's planes (two axes: a half turn about the third).
Image flipped(const Image& image, bool fx, bool fy, bool fz) {
  Image out = image;
  const auto& d = image.dims;
  size_t i = 0;
  for (uint32_t z = 0; z < d[2]; ++z)
    for (uint32_t y = 0; y < d[1]; ++y)
      for (uint32_t x = 0; x < d[0]; ++x, ++i)
        out.data[i] = image.at(fx ? d[0] - 1 - x : x, fy ? d[1] - 1 - y : y, fz ? d[2] - 1 - z : z);
  return out;
}

double mean_abs_difference_relative(const Image& a, const Image& b) {
  double diff = 0.0, total = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    diff += std::abs(a.data[i] - b.data[i]);
    total += std::abs(a.data[i]);
  }
  return diff / total;
}

// Median of `y` over the voxels whose `x` falls in each 50-wide bin of [0, 1000) (bins with
// at least 200 voxels only): the intensity mapping from x's contrast to y's. Medians, since
// partial-volume edges spread every tissue over many bins.
std::vector<double> binned_mapping(const Image& x, const Image& y) {
  std::map<int, std::vector<float>> bins;
  for (size_t i = 0; i < x.data.size(); ++i)
    if (x.data[i] >= 0.0f && x.data[i] < 1000.0f) bins[int(x.data[i] / 50.0f)].push_back(y.data[i]);
  std::vector<double> medians;
  for (auto& [bin, values] : bins) {
    if (values.size() < 200) continue;
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    medians.push_back(values[values.size() / 2]);
  }
  return medians;
}

// True when the sequence both rises and falls by more than `margin` somewhere.
bool rises_and_falls(const std::vector<double>& v, double margin) {
  bool rises = false, falls = false;
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t j = i + 1; j < v.size(); ++j) {
      rises |= v[j] - v[i] > margin;
      falls |= v[i] - v[j] > margin;
    }
  return rises && falls;
}

}  // namespace

TEST(Phantom, IsDeterministicAndCentredOnTheWorldOrigin) {
  const Image a = make_head_phantom(kDims, kVoxelMm, 0);
  const Image b = make_head_phantom(kDims, kVoxelMm, 0);
  EXPECT_EQ(a.data, b.data);
  EXPECT_EQ(a.dims, kDims);
  EXPECT_TRUE(a.spacing().isApprox(Eigen::Vector3d::Constant(kVoxelMm)));
  const Eigen::Vector4d centre = a.voxel_to_world * Eigen::Vector4d(23.5, 23.5, 23.5, 1);
  EXPECT_LT(centre.head<3>().norm(), 1e-12);
  EXPECT_GT(a.at(24, 24, 24), 300.0f);
  // The head fits a 160 mm field of view: every face of a 40^3 grid of 4 mm is background.
  const Image tight = make_head_phantom({40, 40, 40}, 4.0, 0);
  float border = 0.0f;
  for (uint32_t u = 0; u < 40; ++u)
    for (uint32_t v = 0; v < 40; ++v)
      border = std::max({border, tight.at(0, u, v), tight.at(39, u, v), tight.at(u, 0, v),
                         tight.at(u, 39, v), tight.at(u, v, 0), tight.at(u, v, 39)});
  EXPECT_LT(border, 1.0f);
  const auto [lo, hi] = std::minmax_element(a.data.begin(), a.data.end());
  EXPECT_GE(*lo, 0.0f);
  EXPECT_LE(*hi, 1000.0f);
}

TEST(Phantom, HasNoMirrorOrHalfTurnSymmetry) {
  const Image head = make_head_phantom(kDims, kVoxelMm, 0);
  // Relative change of the intensity mass under each flip, measured: 0.09 for the left-right
  // mirror (the subtlest, as in a real head), 0.52 to 0.64 for the others. A head made of
  // centred ellipsoids would give 0 for all of them.
  for (int mask = 1; mask < 8; ++mask) {
    const double change =
        mean_abs_difference_relative(head, flipped(head, mask & 1, mask & 2, mask & 4));
    EXPECT_GT(change, mask == 1 ? 0.05 : 0.3) << "flip mask " << mask;
  }
}

TEST(Phantom, HasSeveralDistinctTissues) {
  const Image head = make_head_phantom({64, 64, 64}, 3.0, 0);
  // Count the 25-wide intensity bins above the background that hold a real structure.
  std::map<int, int> histogram;
  for (float v : head.data)
    if (v > 25.0f) ++histogram[int(v / 25.0f)];
  int plateaus = 0;
  for (const auto& [bin, count] : histogram) plateaus += count > 500 ? 1 : 0;
  EXPECT_GE(plateaus, 6);
}

TEST(Phantom, ContrastsMapNonMonotonically) {
  const Image t1 = make_head_phantom(kDims, kVoxelMm, 0);
  const Image t2 = make_head_phantom(kDims, kVoxelMm, 1);
  EXPECT_TRUE(rises_and_falls(binned_mapping(t1, t2), 200.0));
  // The negative control: a monotonic relabelling does not pass the same check.
  Image brighter = t1;
  for (float& v : brighter.data) v = 0.5f * v + 100.0f;
  EXPECT_FALSE(rises_and_falls(binned_mapping(t1, brighter), 200.0));
}

TEST(Phantom, SecondContrastIsAFunctionOfTheFirst) {
  // What puts the CR and MI optimum exactly at the true alignment: the T2-like value of a
  // voxel follows from its T1-like value, edges included. Measured by 1 - correlation ratio
  // over narrow T1 bins (0 for a function, up to the bins' width).
  const Image t1 = make_head_phantom(kDims, kVoxelMm, 0);
  const Image t2 = make_head_phantom(kDims, kVoxelMm, 1);
  std::map<int, std::vector<double>> bins;
  double sum = 0.0, sum_sq = 0.0;
  for (size_t i = 0; i < t1.data.size(); ++i) {
    bins[int(t1.data[i] / 2.0f)].push_back(t2.data[i]);
    sum += t2.data[i];
    sum_sq += double(t2.data[i]) * t2.data[i];
  }
  double within = 0.0;
  for (const auto& [bin, values] : bins) {
    double s = 0.0, ss = 0.0;
    for (double v : values) s += v, ss += v * v;
    within += ss - s * s / double(values.size());
  }
  const double total = sum_sq - sum * sum / double(t1.data.size());
  EXPECT_LT(within / total, 1e-3);
}

TEST(Phantom, RefusesBadArguments) {
  EXPECT_THROW(make_head_phantom(kDims, kVoxelMm, 2), regpipe::UserError);
  EXPECT_THROW(make_head_phantom(kDims, 0.0, 0), regpipe::UserError);
  EXPECT_THROW(make_head_phantom({0, 4, 4}, 1.0, 0), regpipe::UserError);
}

TEST(SyntheticContrast, IsDeterministicPerSeedAndKeepsGeometry) {
  const Image head = regpipe::with_world_transform(
      make_head_phantom(kDims, kVoxelMm, 0),
      regpipe::rigid_about({0, 1, 0}, 0.2, Eigen::Vector3d::Zero(), {1, 2, 3}));
  const Image a = regpipe::synthetic_contrast(head, 42);
  const Image b = regpipe::synthetic_contrast(head, 42);
  const Image c = regpipe::synthetic_contrast(head, 43);
  EXPECT_EQ(a.data, b.data);
  EXPECT_NE(a.data, c.data);
  EXPECT_EQ(a.dims, head.dims);
  EXPECT_EQ(a.voxel_to_world, head.voxel_to_world);
}

TEST(SyntheticContrast, MapsNonMonotonicallyWithTwoPercentNoise) {
  const Image head = make_head_phantom(kDims, kVoxelMm, 0);
  const Image other = regpipe::synthetic_contrast(head, 1);
  EXPECT_TRUE(rises_and_falls(binned_mapping(head, other), 200.0));

  // Background (input ~0) is pure noise: mean ~0, standard deviation 2% of 1000.
  double sum = 0.0, sum_sq = 0.0;
  size_t n = 0;
  for (size_t i = 0; i < head.data.size(); ++i)
    if (head.data[i] < 1.0f) {
      sum += other.data[i];
      sum_sq += double(other.data[i]) * other.data[i];
      ++n;
    }
  ASSERT_GT(n, 10000u);
  const double mean = sum / double(n);
  EXPECT_NEAR(mean, 0.0, 1.0);
  EXPECT_NEAR(std::sqrt(sum_sq / double(n) - mean * mean), 20.0, 1.0);
  EXPECT_LT(*std::max_element(other.data.begin(), other.data.end()), 1000.0f + 6 * 20.0f);
}

TEST(WithWorldTransform, PremultipliesTheHeader) {
  const Image head = make_head_phantom({8, 8, 8}, 2.0, 1);
  const Eigen::Matrix4d g = regpipe::rigid_about({1, 1, 0}, 0.3, {5, 0, 0}, {0, -2, 1});
  const Image moved = regpipe::with_world_transform(head, g);
  EXPECT_EQ(moved.data, head.data);
  EXPECT_TRUE(moved.voxel_to_world.isApprox(g * head.voxel_to_world, 1e-15));
}
