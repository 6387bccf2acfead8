// regpipe_common's row bracket (row_bracket.hpp), which cost_cpu's row spans and cuda.cr's fused
// kernel both narrow each reference row with, against a brute-force reference: every x of a
// row whose float-rounded position on an axis lies in [0, last] must fall inside the bracket,
// with the position computed in either order its users compute it (cost_cpu: left to right in
// double; fused: fma(m, x, at0)), and the bracket may exceed those x by no more than its
// margin and the voxel of widening on each side.
#include <regpipe_common/row_bracket.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace regpipe_common {
namespace {

struct Axis {
  double m, y_term, z_term, shift;  // position = m x + y_term + z_term + shift
  double at0() const { return y_term + z_term + shift; }
};

bool inside_left_to_right(const Axis& a, int x, double last) {
  const float p = float(a.m * x + a.y_term + a.z_term + a.shift);
  return p >= 0.f && p <= float(last);
}

bool inside_fused(const Axis& a, int x, double last) {
  const float p = float(std::fma(a.m, double(x), a.at0()));
  return p >= 0.f && p <= float(last);
}

// Checks one axis over a row of nx voxels; returns whether some voxel maps inside.
bool check_axis(const Axis& a, double last, int nx) {
  double lo = 0.0, hi = double(nx - 1);
  const AxisBracket b = axis_bracket(a.m, last, nx);
  narrow_to_axis(b, a.at0(), last, lo, hi);
  int first = nx, past = 0;
  for (int x = 0; x < nx; ++x) {
    if (!inside_left_to_right(a, x, last) && !inside_fused(a, x, last)) continue;
    first = std::min(first, x);
    past = x + 1;
    EXPECT_TRUE(lo <= hi && x >= int(lo) && x <= int(hi))
        << "x " << x << " maps inside but lies outside [" << lo << ", " << hi << "]: m " << a.m << " at0 " << a.at0()
        << " last " << last << " nx " << nx;
  }
  if (first < past && b.inverse != 0.0) {
    const double slack = b.margin * std::fabs(b.inverse) + 2.0;
    EXPECT_LE(double(first) - lo, slack) << "m " << a.m << " at0 " << a.at0();
    EXPECT_LE(hi - double(past - 1), slack) << "m " << a.m << " at0 " << a.at0();
  }
  return first < past;
}

TEST(RowBracket, HoldsEveryVoxelInsideOnRandomRows) {
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int rows_inside = 0, rows_empty = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const double last = double(1 + int(std::abs(u(rng)) * 300));
    const int nx = 1 + int(std::abs(u(rng)) * 400);
    // Slopes from steep to almost flat (rows nearly along the moving axis), both signs.
    const double m = u(rng) * std::pow(10.0, -8.0 * std::abs(u(rng)) + 0.5);
    const Axis a{m, 40.0 * u(rng), 40.0 * u(rng), last / 2 + last * u(rng)};
    (check_axis(a, last, nx) ? rows_inside : rows_empty) += 1;
  }
  EXPECT_GT(rows_inside, 1000);
  EXPECT_GT(rows_empty, 100);
}

// Positions landing exactly on the domain's edges, zero and tiny slopes (flat along the row:
// the bracket keeps or empties the row whole), negative slopes, a one-voxel axis.
TEST(RowBracket, HoldsEveryVoxelInsideAtEdgesAndFlatAxes) {
  const double slopes[] = {1.0, -1.0, 0.0, 0.5, -2.0, 1e-7, -1e-7, 3e-9, 1e-12, -1e-13};
  const double shifts[] = {0.0, -3.0, 5.0, 15.0, -15.0, 15.0 - 1e-6, 1e-7, -1e-7, 15.0 + 1e-6, -1e-300};
  for (const double last : {0.0, 15.0, 255.0})
    for (const double m : slopes)
      for (const double shift : shifts)
        for (const int nx : {1, 7, 40, 300}) check_axis(Axis{m, 0.0, 0.0, shift}, last, nx);
}

TEST(RowBracket, EmptiesRowsWhollyOutside) {
  double lo = 0.0, hi = 99.0;
  narrow_to_axis(axis_bracket(1.0, 50.0, 100), 200.0, 50.0, lo, hi);  // positions 200..299
  EXPECT_GT(lo, hi);
  lo = 0.0, hi = 99.0;
  narrow_to_axis(axis_bracket(0.0, 50.0, 100), -1.0, 50.0, lo, hi);  // flat at -1
  EXPECT_GT(lo, hi);
  lo = 0.0, hi = 99.0;
  narrow_to_axis(axis_bracket(0.0, 50.0, 100), 50.0, 50.0, lo, hi);  // flat on the last plane: kept whole
  EXPECT_EQ(lo, 0.0);
  EXPECT_EQ(hi, 99.0);
}

}  // namespace
}  // namespace regpipe_common
