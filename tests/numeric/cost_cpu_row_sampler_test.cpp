// cost_cpu's row sampler (plugins/cost_cpu/src/row_sampler.hpp): positions and trilinear
// samples eight voxels at a time (AVX2: x-neighbouring corners loaded in pairs), with or without
// the corners ahead prefetched, must equal the scalar helpers' bit for bit, on rows that end on
// the domain's last planes (the clamped upper neighbour) and at any chunk length.
#include "../../plugins/cost_cpu/src/row_sampler.hpp"  // the plugin's private header
#include "../../plugins/cost_cpu/src/row_span.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace regpipe::cost_cpu {
namespace {

TEST(CostCpuRowSampler, VectorisedSamplesEqualTheScalarOnesBitwise) {
  const regpipe_common::Grid mov{29, 23, 19};
  if (row_sampler_for(mov) == RowSampler::kScalar)
    GTEST_SKIP() << "this CPU has no AVX2: only the scalar path runs";
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-100.f, 1000.f);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<float> data(regpipe_common::voxel_count(mov));
  for (float& v : data) v = value(rng);
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    regpipe_common::VoxelMap map{};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) map.m[4 * i + j] = (i == j ? 1.0 : 0.0) + 0.4 * u(rng);
      map.m[4 * i + 3] = 6.0 * u(rng);
    }
    if (trial % 4 == 0) map.m[3] = map.m[7] = map.m[11] = 0.0;  // integer positions: edges hit exactly
    if (trial % 4 == 1) {  // a whole-voxel shift: every row ends on the last x plane (clamped)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) map.m[4 * i + j] = j == i ? 1.0 : j == 3 ? double(trial % 3) : 0.0;
    }
    for (int z = 0; z < 25; ++z)
      for (int y = 0; y < 25; ++y) {
        const RowSpan span = inside_span(map, mov, 40, y, z);
        for (int begin = span.begin; begin < span.end; begin += RowSamples::kChunk) {
          const int count = std::min(RowSamples::kChunk, span.end - begin);
          RowSamples scalar;
          sample_row(Interpolation::kTrilinear, RowSampler::kScalar, map, data.data(), mov, begin,
                     count, y, z, scalar);
          for (RowSampler sampler : {RowSampler::kAvx2, RowSampler::kAvx2Prefetching}) {
            RowSamples fast;
            sample_row(Interpolation::kTrilinear, sampler, map, data.data(), mov, begin, count, y,
                       z, fast);
            ASSERT_EQ(std::memcmp(fast.x, scalar.x, count * sizeof(float)), 0);
            ASSERT_EQ(std::memcmp(fast.y, scalar.y, count * sizeof(float)), 0);
            ASSERT_EQ(std::memcmp(fast.z, scalar.z, count * sizeof(float)), 0);
            ASSERT_EQ(std::memcmp(fast.value, scalar.value, count * sizeof(float)), 0)
                << "trial " << trial << " y " << y << " z " << z << " prefetching "
                << (sampler == RowSampler::kAvx2Prefetching);
          }
          compared += count;
        }
      }
  }
  EXPECT_GT(compared, 20000);
}

// Prefetching pays only where the moving level outgrows a core's L2: a 16 KB level is sampled
// without it, a 1 mm brain level (about 25 MB) with it.
TEST(CostCpuRowSampler, PrefetchesOnlyLevelsLargerThanTheL2Cache) {
  if (row_sampler_for({16, 16, 16}) == RowSampler::kScalar) GTEST_SKIP() << "this CPU has no AVX2";
  EXPECT_EQ(row_sampler_for({16, 16, 16}), RowSampler::kAvx2);
  EXPECT_EQ(row_sampler_for({165, 225, 167}), RowSampler::kAvx2Prefetching);
  EXPECT_EQ(row_sampler_for({1, 512, 512}), RowSampler::kScalar);  // trilinear8 needs nx >= 2
}

}  // namespace
}  // namespace regpipe::cost_cpu
