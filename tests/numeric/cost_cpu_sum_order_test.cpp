// cpu.cr's order of summation, held bit for bit: every sample is added to its reference bin's
// sums in x-fastest order within each slab (one per plane for these small grids), the slabs in
// z order, whether it goes one by one or four at a time (cr_groups_avx2.hpp: an unweighted
// reference with AVX2). The control: four interleaved lanes by x % 4 (another order of the same
// sums) must give other bits in the sums here, so the data tell orders apart.
#include "cost_cpu_support.hpp"

#include <regpipe_common/measure_math.hpp>
#include <regpipe_common/prepared_image.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace regpipe::test {
namespace {

constexpr int kBins = 8;

struct CostAndOverlap {
  double cost = 0.0, overlap = 0.0;
  std::vector<double> sums;  // per bin {w, w y, w y y}
};

// cpu.cr summed in `lanes` interleaved lanes by x % lanes (1: plain x order, the plugin's),
// each lane in x order, the lanes added in lane order at each plane's end; one slab per plane.
// Written out here rather than taken from the plugin.
CostAndOverlap cr_by_lanes(const Image& ref, const Image* ref_weight, const Image& mov,
                           const Eigen::Matrix4d& transform, int lanes) {
  const rp_image ref_view = ref.view(), mov_view = mov.view();
  const rp_image weight_view = ref_weight != nullptr ? ref_weight->view() : rp_image{};
  regpipe_common::PreparedImage r = regpipe_common::prepare_image(
      ref_view, ref_weight != nullptr ? &weight_view : nullptr, "reference");
  regpipe_common::bin_voxels(r, kBins, "reference");
  const regpipe_common::PreparedImage m = regpipe_common::prepare_image(mov_view, nullptr, "moving");
  const Eigen::Matrix4d row_major_transform = transform.transpose();  // Eigen is column-major
  regpipe_common::VoxelMap map{};
  regpipe_common::make_voxel_map(r.voxel_to_world, row_major_transform.data(), m.voxel_to_world, &map);
  const int nx = r.grid.nx, ny = r.grid.ny, nz = r.grid.nz;
  auto fold = [&](const std::vector<double>& lane_values, std::size_t size, std::size_t i) {
    double sum = lane_values[i];
    for (int l = 1; l < lanes; ++l) sum += lane_values[std::size_t(l) * size + i];
    return sum;
  };
  const std::size_t size = 3 * kBins;
  std::vector<double> total(size, 0.0);
  double overlap = 0.0, total_weight = 0.0;
  for (int z = 0; z < nz; ++z) {
    std::vector<double> sums(lanes * size, 0.0), overlaps(lanes, 0.0), weights(lanes, 0.0);
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const std::size_t i = std::size_t(x) + std::size_t(nx) * (y + std::size_t(ny) * z);
        const int lane = x % lanes;
        const float w_ref = r.weight(i);
        if (!(w_ref > 0.f)) continue;
        weights[lane] += w_ref;
        float q[3];
        for (int a = 0; a < 3; ++a)
          q[a] = float(map.m[4 * a] * x + map.m[4 * a + 1] * y + map.m[4 * a + 2] * z + map.m[4 * a + 3]);
        if (!regpipe_common::inside(m.grid, q[0], q[1], q[2])) continue;
        const double w = double(w_ref);
        overlaps[lane] += w;
        const double v = double(regpipe_common::trilinear(m.values.data(), m.grid, q[0], q[1], q[2])) - m.mean;
        double* bin = &sums[std::size_t(lane) * size + 3 * std::size_t(r.voxel_bins[i])];
        bin[0] += w;
        bin[1] += w * v;
        bin[2] += w * v * v;
      }
    for (std::size_t j = 0; j < size; ++j) total[j] += fold(sums, size, j);
    overlap += fold(overlaps, 1, 0);
    total_weight += fold(weights, 1, 0);
  }
  return {regpipe_common::correlation_ratio_cost(total.data(), kBins), overlap / total_weight, total};
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A textured image whose first x third is flat background (one bin for long runs of x).
Image textured_with_background(std::array<uint32_t, 3> dims, uint32_t seed) {
  Image image = random_image(dims, Eigen::Matrix4d::Identity(), seed, 0.f, 1000.f);
  for (std::size_t i = 0; i < image.data.size(); ++i)
    if (i % dims[0] < dims[0] / 3) image.data[i] = 5.f;
  return image;
}

// With a reference weight (samples one by one) and without (four at a time with AVX2).
TEST(CostCpuSumOrder, CorrelationRatioAddsEverySampleInXOrder) {
  const Image ref = textured_with_background({90, 13, 9}, 1);
  const Image weight = random_weight(ref, 2);  // fractional weights
  const Image mov = random_image({85, 17, 12}, Eigen::Matrix4d::Identity(), 3, 0.f, 1000.f);
  int costs_differ = 0;  // trials whose lane-order cost has other bits than the x-order one
  for (const Image* ref_weight : {&weight, static_cast<const Image*>(nullptr)}) {
    SCOPED_TRACE(ref_weight != nullptr ? "weighted reference" : "unweighted reference");
    auto cost = make_cost("cpu.cr", {{"bins", std::to_string(kBins)}, {"threads", "2"}});
    cost->set_reference(ref, ref_weight);
    cost->set_moving(mov, nullptr);
    std::mt19937 rng(4);
    int differs_from_lanes = 0;
    for (int trial = 0; trial < 10; ++trial) {
      const Eigen::Matrix4d t = random_affine(rng, grid_centre(ref));
      double overlap = -1.0;
      const double got = evaluate_one(*cost, t, &overlap);
      const CostAndOverlap want = cr_by_lanes(ref, ref_weight, mov, t, 1);
      EXPECT_TRUE(same_bits(got, want.cost)) << "trial " << trial << ": " << got << " vs " << want.cost;
      EXPECT_TRUE(same_bits(overlap, want.overlap)) << "trial " << trial;
      const CostAndOverlap lanes = cr_by_lanes(ref, ref_weight, mov, t, 4);
      EXPECT_NEAR(lanes.cost, want.cost, 1e-12);  // the same cost, rounded otherwise
      if (std::memcmp(lanes.sums.data(), want.sums.data(), want.sums.size() * sizeof(double)) != 0)
        ++differs_from_lanes;
      if (!same_bits(lanes.cost, want.cost)) ++costs_differ;
    }
    EXPECT_GE(differs_from_lanes, 8) << "the data no longer tell the two orders' sums apart";
  }
  EXPECT_GE(costs_differ, 3) << "the costs no longer tell the two orders apart";
}

}  // namespace
}  // namespace regpipe::test
