// cost_cpu's row spans (plugins/cost_cpu/src/row_span.hpp) against the voxel-by-voxel test
// they replace: for every row of many voxel maps, the span must be exactly the set of x whose
// float-rounded position passes regpipe_common::inside. The traversal's bitwise identity with
// the earlier per-voxel loop rests on it.
#include "../../plugins/cost_cpu/src/row_span.hpp"  // the plugin's private header

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace regpipe::cost_cpu {
namespace {

using regpipe_common::Grid;
using regpipe_common::VoxelMap;

// The x of row (y, z) that map inside, tested one by one.
std::vector<int> inside_by_voxel(const VoxelMap& map, const Grid& mov, int nx, int y, int z) {
  std::vector<int> xs;
  for (int x = 0; x < nx; ++x)
    if (maps_inside(map, mov, x, y, z)) xs.push_back(x);
  return xs;
}

std::vector<int> inside_by_span(const VoxelMap& map, const Grid& mov, int nx, int y, int z) {
  std::vector<int> xs;
  const RowSpan span = inside_span(map, mov, nx, y, z);
  for (int x = span.begin; x < span.end; ++x) xs.push_back(x);
  return xs;
}

// A rotation about a random axis, scaled, plus a shift: rows cross the moving grid at any angle.
VoxelMap random_map(std::mt19937& rng, double max_angle) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double angle = max_angle * u(rng), scale = 1.0 + 0.3 * u(rng);
  double axis[3] = {u(rng), u(rng), u(rng)};
  const double norm = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  for (double& a : axis) a /= norm;
  const double c = std::cos(angle), s = std::sin(angle), t = 1.0 - c;
  const double r[3][3] = {
      {t * axis[0] * axis[0] + c, t * axis[0] * axis[1] - s * axis[2], t * axis[0] * axis[2] + s * axis[1]},
      {t * axis[0] * axis[1] + s * axis[2], t * axis[1] * axis[1] + c, t * axis[1] * axis[2] - s * axis[0]},
      {t * axis[0] * axis[2] - s * axis[1], t * axis[1] * axis[2] + s * axis[0], t * axis[2] * axis[2] + c}};
  VoxelMap map{};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) map.m[4 * i + j] = scale * r[i][j];
    map.m[4 * i + 3] = 12.0 * u(rng);
  }
  return map;
}

TEST(CostCpuRowSpan, EqualsTheVoxelByVoxelTestOnRandomMaps) {
  std::mt19937 rng(17);
  const Grid mov{23, 19, 17};
  const int nx = 31, ny = 27, nz = 21;
  int rows_inside = 0, rows_partial = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const VoxelMap map = random_map(rng, trial < 20 ? 0.2 : 3.0);
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y) {
        const std::vector<int> expected = inside_by_voxel(map, mov, nx, y, z);
        ASSERT_EQ(inside_by_span(map, mov, nx, y, z), expected)
            << "trial " << trial << " row y=" << y << " z=" << z;
        rows_inside += !expected.empty();
        rows_partial += !expected.empty() && int(expected.size()) < nx;
      }
  }
  // The maps exercise both ends: rows wholly outside, partly and (mostly) inside.
  EXPECT_GT(rows_inside, 1000);
  EXPECT_GT(rows_partial, 1000);
}

// Positions that land exactly on the domain's edges (integer maps), slopes of zero (rows along
// a moving axis), tiny slopes (an almost axis-aligned rotation, where float rounding moves
// the edge by many voxels) and a flat moving axis.
TEST(CostCpuRowSpan, EqualsTheVoxelByVoxelTestOnEdgesAndTinySlopes) {
  const Grid grids[] = {{16, 12, 10}, {16, 12, 1}};
  const double slopes[] = {1.0, -1.0, 0.0, 0.5, 2.0, 1e-7, -1e-7, 3e-9, 1e-12};
  const double offsets[] = {0.0, -3.0, 5.0, 15.0, -15.0, 7.0 - 1e-6, 1e-7, -1e-7, 15.0 + 1e-6};
  for (const Grid& mov : grids)
    for (const double slope : slopes)
      for (const double offset : offsets) {
        VoxelMap map{};
        map.m[0] = slope;  // moving x = slope * x + offset
        map.m[3] = offset;
        map.m[5] = 1.0;    // moving y = y
        map.m[10] = 1.0;   // moving z = z - 1
        map.m[11] = -1.0;
        for (const int nx : {1, 7, 40})
          for (const int z : {0, 1, 2})
            for (const int y : {-1, 0, 5, 11, 12})
              ASSERT_EQ(inside_by_span(map, mov, nx, y, z), inside_by_voxel(map, mov, nx, y, z))
                  << "slope " << slope << " offset " << offset << " nx " << nx << " y " << y
                  << " z " << z << " flat " << (mov.nz == 1);
      }
}

}  // namespace
}  // namespace regpipe::cost_cpu
