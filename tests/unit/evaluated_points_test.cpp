// optim.flirt's memory of the points evaluated at a level (plugins/optim_flirt/src/
// evaluated_points.hpp): every point added is found again at its place, with its cost, past
// the index's growth; a point never added is not found, nor one differing in a single bit
// (-0.0 against 0.0); clear() forgets everything.
#include "../../plugins/optim_flirt/src/evaluated_points.hpp"  // the plugin's private header

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace regpipe::flirt {
namespace {

TEST(EvaluatedPoints, FindsEveryPointAddedAndNoOther) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const auto random_point = [&] {
    Point p;
    for (double& v : p) v = u(rng);
    return p;
  };
  // Far more points than the first index holds (1024 slots, at most half full): it grows six
  // times.
  std::vector<Point> added(40000);
  EvaluatedPoints memory;
  for (std::size_t i = 0; i < added.size(); ++i) {
    added[i] = random_point();
    added[i][5] = double(i % 7);  // many points alike but in a few words
    ASSERT_EQ(memory.find(added[i]), EvaluatedPoints::kNone);
    const std::size_t at = memory.add(added[i]);
    ASSERT_EQ(at, i);
    memory.cost(at) = double(i) + 0.5;
  }
  std::size_t misplaced = 0;
  for (std::size_t i = 0; i < added.size(); ++i) misplaced += memory.find(added[i]) != i;
  EXPECT_EQ(misplaced, 0u);
  EXPECT_EQ(memory.cost(memory.find(added[12345])), 12345.5);
  for (int k = 0; k < 1000; ++k) EXPECT_EQ(memory.find(random_point()), EvaluatedPoints::kNone);

  Point zero{}, negative_zero{};
  negative_zero[3] = -0.0;
  memory.cost(memory.add(zero)) = 1.0;
  EXPECT_EQ(memory.find(negative_zero), EvaluatedPoints::kNone) << "bit for bit, not ==";

  memory.clear();
  EXPECT_EQ(memory.size(), 0u);
  EXPECT_EQ(memory.find(added[0]), EvaluatedPoints::kNone);
  EXPECT_EQ(memory.find(zero), EvaluatedPoints::kNone);
}

}  // namespace
}  // namespace regpipe::flirt
