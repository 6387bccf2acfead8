// regpipe_common::head_weighted, the smooth head weight of head_weight_mm (cpu.cr, cuda.cr):
// a hollow ball whose cavity must count as head, on grids of known geometry.
#include <regpipe_common/head_weight.hpp>

#include <regpipe/plugin.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <limits>
#include <random>
#include <vector>

using regpipe_common::foreground_threshold;
using regpipe_common::head_weighted;

namespace {

constexpr int kN = 40;  // voxels a side

// A ball of radius 12 mm (intensity 100) about the grid's centre with a dark cavity of radius 5
// mm inside it (0, as the air around it); voxels of `spacing_z` mm along z, 1 mm in-plane.
struct HollowBall {
  explicit HollowBall(double spacing_z) : spacing_z(spacing_z) {
    const double c = (kN - 1) / 2.0;
    for (int z = 0; z < kN; ++z)
      for (int y = 0; y < kN; ++y)
        for (int x = 0; x < kN; ++x) {
          const double r = radius_mm(x, y, z);
          values.push_back(r <= 12.0 && r > 5.0 ? 100.f : 0.f);
        }
    const double m[16] = {1, 0, 0, -c, 0, 1, 0, -c, 0, 0, spacing_z, -c * spacing_z, 0, 0, 0, 1};
    image = {sizeof(rp_image), {kN, kN, kN}, {}, values.data()};
    std::copy(m, m + 16, image.voxel_to_world);
  }
  double radius_mm(int x, int y, int z) const {
    const double c = (kN - 1) / 2.0;
    return std::sqrt((x - c) * (x - c) + (y - c) * (y - c) + (z - c) * (z - c) * spacing_z * spacing_z);
  }
  double spacing_z;
  std::vector<float> values;
  rp_image image{};
};

std::size_t index(int x, int y, int z) { return std::size_t(x) + kN * (std::size_t(y) + kN * std::size_t(z)); }

}  // namespace

TEST(HeadWeight, ThresholdIsAFifthOfThe99thPercentileOfTheFiniteValues) {
  std::vector<float> v;
  for (int i = 0; i < 100; ++i) v.push_back(float(i));
  v.push_back(std::numeric_limits<float>::quiet_NaN());
  EXPECT_FLOAT_EQ(foreground_threshold(v.data(), v.size()), 0.2f * 99.f);
  EXPECT_EQ(foreground_threshold(v.data() + 100, 1), 0.f);  // no finite value
}

// The threshold found through the histogram is the 99th percentile that nth_element over every
// finite value finds, bit for bit: negative and positive values, ties, zeros of both signs, an
// image too large for one slab, infinities and NaN left out.
TEST(HeadWeight, ThresholdIsExactlyAFifthOfTheNinetyNinthPercentileOfTheFiniteValues) {
  std::mt19937 random(7);
  std::normal_distribution<float> tissue(300.f, 120.f);
  for (const std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(2'000'003)}) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t kind = i % 7;
      v[i] = kind == 0 ? 0.f : kind == 1 ? -0.f : kind == 2 ? std::round(tissue(random)) : tissue(random);
    }
    if (n > 1) {
      v[n / 2] = std::numeric_limits<float>::infinity();
      v[n / 3] = std::numeric_limits<float>::quiet_NaN();
      v[n / 5] = -1e30f;
    }
    std::vector<float> finite;
    for (float x : v)
      if (std::isfinite(x)) finite.push_back(x);
    const std::size_t k = std::min(finite.size() - 1, std::size_t(0.99 * double(finite.size())));
    std::nth_element(finite.begin(), finite.begin() + long(k), finite.end());
    EXPECT_EQ(foreground_threshold(v.data(), v.size()), 0.2f * finite[k]) << n;
  }
}

TEST(HeadWeight, CavityCountsAsHeadAndTheEdgeIsSmooth) {
  const HollowBall ball(1.0);
  const auto head = head_weighted(ball.image, nullptr, 2.0, "reference");
  ASSERT_TRUE(head.has_value());
  ASSERT_EQ(head->values.size(), ball.values.size());
  EXPECT_EQ(head->weight.data, head->values.data());
  EXPECT_EQ(head->weight.dims[2], uint32_t(kN));
  const int c = kN / 2;
  EXPECT_GT(head->values[index(c, c, c)], 0.999f) << "the dark cavity is enclosed: head, not air";
  EXPECT_GT(head->values[index(c + 5, c, c)], 0.99f) << "tissue 6.5 mm inside the edge";
  EXPECT_LT(head->values[index(c + 17, c, c)], 0.01f) << "air 5 mm outside the edge";
  EXPECT_LT(head->values[index(0, 0, 0)], 1e-6f);
  // Across the edge (radius 12 mm) the weight falls smoothly, through 1/2 near the edge.
  float previous = 1.f;
  for (int x = c + 8; x <= c + 17; ++x) {
    const float w = head->values[index(x, c, c)];
    EXPECT_LE(w, previous + 1e-6f) << "x " << x;
    if (std::fabs(ball.radius_mm(x, c, c) - 12.0) < 0.6) {
      EXPECT_GT(w, 0.3f);
      EXPECT_LT(w, 0.8f);
    }
    previous = w;
  }
}

TEST(HeadWeight, SigmaIsInMillimetresAlongEveryAxis) {
  // With 2 mm slices, 3 mm outside the edge along z (15 mm from the centre) the weight lies
  // between those 2.5 and 3.5 mm outside it along x: the same blur in mm, where a sigma in
  // voxels would spread twice as far along z (0.23 there against 0.07).
  const HollowBall ball(2.0);
  const auto head = head_weighted(ball.image, nullptr, 2.0, "moving");
  ASSERT_TRUE(head.has_value());
  const int c = kN / 2;                                       // 0.5 mm past the centre along x
  const float along_z = head->values[index(c, c, c + 7)];     // 15 mm from the centre
  const float x_nearer = head->values[index(c + 14, c, c)];   // 14.5 mm
  const float x_farther = head->values[index(c + 15, c, c)];  // 15.5 mm
  std::printf("3 mm outside: %.3f along z, %.3f .. %.3f along x\n", along_z, x_farther, x_nearer);
  EXPECT_LT(along_z, x_nearer + 0.02f);
  EXPECT_GT(along_z, x_farther - 0.02f);
}

TEST(HeadWeight, GivenWeightIsMultipliedAndSigmaZeroLeavesItAlone) {
  const HollowBall ball(1.0);
  std::vector<float> half(ball.values.size(), 0.5f);
  rp_image given = ball.image;
  given.data = half.data();
  const auto plain = head_weighted(ball.image, nullptr, 2.0, "reference");
  const auto weighted = head_weighted(ball.image, &given, 2.0, "reference");
  ASSERT_TRUE(plain && weighted);
  for (std::size_t i = 0; i < half.size(); ++i) ASSERT_FLOAT_EQ(weighted->values[i], 0.5f * plain->values[i]);
  EXPECT_FALSE(head_weighted(ball.image, &given, 0.0, "reference").has_value());
}

TEST(HeadWeight, NonFiniteVoxelIsRefusedNamingTheImage) {
  HollowBall ball(1.0);
  ball.values[index(3, 4, 5)] = std::numeric_limits<float>::infinity();
  try {
    head_weighted(ball.image, nullptr, 2.0, "moving");
    FAIL() << "a non-finite voxel was accepted";
  } catch (const rp::Error& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("moving"), std::string::npos) << e.what();
  }
}
