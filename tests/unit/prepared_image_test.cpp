// regpipe_common::prepare_image and bin_voxels, the cost plugins' private copy of an image:
// checked and measured in parallel slabs, they must give what one pass in voxel order gives,
// bit for bit: the range over the weighted voxels (of the equal extremes -0 and 0, the
// first), the mean's sums in voxel order, and every voxel's bin.
#include <regpipe_common/prepared_image.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

struct SerialMeasure {
  float min_value = 0.f, max_value = 0.f;
  double mean = 0.0;
};

SerialMeasure serial_measure(const std::vector<float>& values, const std::vector<float>& weights) {
  SerialMeasure m;
  bool first = true;
  double sum_w = 0.0, sum_wv = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float w = weights.empty() ? 1.f : weights[i];
    if (!(w > 0.f)) continue;
    m.min_value = first || values[i] < m.min_value ? values[i] : m.min_value;
    m.max_value = first || values[i] > m.max_value ? values[i] : m.max_value;
    first = false;
    sum_w += w;
    sum_wv += double(w) * values[i];
  }
  m.mean = sum_wv / sum_w;
  return m;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(PreparedImage, EqualsOneSerialPassBitForBit) {
  const uint32_t dims[3] = {101, 97, 61};  // 597,617 voxels: several parallel slabs
  const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  const std::size_t n = std::size_t(dims[0]) * dims[1] * dims[2];
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> tissue(1.f, 1000.f), unit(0.f, 1.f);
  std::vector<float> values(n), weights(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = unit(rng) < 0.3f ? 0.f : tissue(rng);  // a background of zeros
    weights[i] = unit(rng) < 0.2f ? 0.f : unit(rng);
  }
  values[n / 2 + 7] = -0.f;  // the first of the range's equal lower ends, past a slab's start
  weights[n / 2 + 7] = 0.5f;
  for (std::size_t i = 0; i < n / 2 + 7; ++i)
    if (values[i] == 0.f) values[i] = 1.f;  // no earlier zero

  for (const bool weighted : {false, true}) {
    const rp_image image = regpipe_common::image_view(dims, identity, values.data());
    const rp_image weight = regpipe_common::image_view(dims, identity, weights.data());
    regpipe_common::PreparedImage p =
        regpipe_common::prepare_image(image, weighted ? &weight : nullptr, "reference");
    const SerialMeasure serial = serial_measure(values, weighted ? weights : std::vector<float>{});
    EXPECT_TRUE(same_bits(p.min_value, serial.min_value)) << p.min_value << " weighted " << weighted;
    EXPECT_TRUE(std::signbit(p.min_value)) << "the first lower end is -0";
    EXPECT_TRUE(same_bits(p.max_value, serial.max_value)) << p.max_value;
    EXPECT_TRUE(same_bits(p.mean, serial.mean)) << p.mean << " against " << serial.mean;
    EXPECT_EQ(p.values, values);
    EXPECT_EQ(p.weights, weighted ? weights : std::vector<float>{});

    regpipe_common::bin_voxels(p, 64, "reference");
    ASSERT_EQ(p.voxel_bins.size(), n);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) differ += p.voxel_bins[i] != p.binning.bin(values[i]);
    EXPECT_EQ(differ, 0u);
  }
}

}  // namespace
