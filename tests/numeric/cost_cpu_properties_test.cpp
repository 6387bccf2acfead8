// Properties every cpu.* cost must have: the known optimum on identical images, the documented
// worst value without overlap, batching and thread count that never change a bit, cancellation.
#include "cost_cpu_naive.hpp"
#include "cost_cpu_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace regpipe::test {
namespace {

// 8 equally spaced intensity levels on a 9x8x7 grid: with 8 bins each level is its own bin,
// so a perfectly aligned copy explains itself exactly.
Image leveled_image() {
  Image image = random_image({9, 8, 7}, Eigen::Matrix4d::Identity(), 11, 0.f, 8.f);
  for (float& v : image.data) v = 10.f * std::floor(v);
  return image;
}

TEST(CostCpuProperties, IdenticalImagesUnderIdentityReachTheOptimum) {
  const Image image = leveled_image();
  const std::map<std::string, std::string> bins = {{"bins", "8"}};
  auto cost_of = [&](const std::string& id, const std::map<std::string, std::string>& params) {
    auto cost = make_cost(id, params);
    cost->set_reference(image, nullptr);
    cost->set_moving(image, nullptr);
    double overlap = 0.0;
    const double c = evaluate_one(*cost, Eigen::Matrix4d::Identity(), &overlap);
    EXPECT_EQ(overlap, 1.0) << id;
    return c;
  };
  EXPECT_NEAR(cost_of("cpu.cr", bins), 0.0, 1e-12);
  EXPECT_NEAR(cost_of("cpu.ncc", {}), 0.0, 1e-12);
  EXPECT_EQ(cost_of("cpu.ls", {}), 0.0);
  // The joint histogram is diagonal: MI = H(R) = H(M) and NMI = 2.
  const double entropy = naive_reference_entropy(image, 8);
  EXPECT_GT(entropy, 1.5);  // the levels are well populated (ln 8 = 2.08)
  EXPECT_NEAR(cost_of("cpu.mi", bins), -entropy, 1e-12);
  EXPECT_NEAR(cost_of("cpu.nmi", bins), -2.0, 1e-12);
}

TEST(CostCpuProperties, NoOverlapGivesTheDocumentedWorstValue) {
  const std::map<std::string, double> worst = {
      {"cpu.cr", 1.0}, {"cpu.mi", 0.0}, {"cpu.nmi", -1.0}, {"cpu.ncc", 2.0}, {"cpu.ls", 1e30}};
  const Image ref = random_image({6, 5, 4}, Eigen::Matrix4d::Identity(), 1);
  const Image mov = random_image({5, 6, 4}, Eigen::Matrix4d::Identity(), 2);
  for (const std::string& id : kCostCpuIds)
    for (const char* border : {"0", "3"}) {
      auto cost = make_cost(id, {{"border_mm", border}});
      cost->set_reference(ref, nullptr);
      cost->set_moving(mov, nullptr);
      const Evaluation e = evaluate(*cost, {translation(1000, 0, 0), translation(0, -50, 0)});
      for (size_t i = 0; i < 2; ++i) {
        EXPECT_TRUE(std::isfinite(e.costs[i])) << id;
        EXPECT_EQ(e.costs[i], worst.at(id)) << id << " border_mm=" << border;
        EXPECT_EQ(e.overlaps[i], 0.0) << id;
      }
    }
}

TEST(CostCpuProperties, ZeroMovingVarianceOverTheOverlapGivesTheWorstValue) {
  // The moving image is 7 on its first two x columns: a shift of -3.5 voxels sees only them.
  Image mov = random_image({6, 4, 4}, Eigen::Matrix4d::Identity(), 3);
  for (uint32_t z = 0; z < 4; ++z)
    for (uint32_t y = 0; y < 4; ++y)
      for (uint32_t x = 0; x < 2; ++x) mov.data[x + 6 * (y + 4 * z)] = 7.f;
  const Image ref = random_image({6, 4, 4}, Eigen::Matrix4d::Identity(), 4);
  for (const auto& [id, worst] : std::map<std::string, double>{{"cpu.cr", 1.0}, {"cpu.ncc", 2.0}}) {
    auto cost = make_cost(id);
    cost->set_reference(ref, nullptr);
    cost->set_moving(mov, nullptr);
    double overlap = 0.0;
    EXPECT_EQ(evaluate_one(*cost, translation(-4, 0, 0), &overlap), worst) << id;
    EXPECT_GT(overlap, 0.0);
  }
}

// Five components plus the partial-volume variant, on a grid of 12 z planes (12 slabs).
struct Variant {
  std::string id;
  std::map<std::string, std::string> params;
};
const std::vector<Variant> kVariants = {
    {"cpu.cr", {{"bins", "32"}}},
    {"cpu.mi", {{"bins", "24"}}},
    {"cpu.nmi", {{"bins", "24"}, {"partial_volume", "true"}}},
    {"cpu.ncc", {{"border_mm", "2"}}},
    {"cpu.ls", {{"interpolation", "nearest"}}},
};

struct Scene {
  Image ref = random_image({10, 9, 12}, Eigen::Matrix4d::Identity(), 21);
  Image mov = random_image({11, 10, 9}, translation(-1, 0.5, 1), 22);
  Image ref_weight = random_weight(ref, 23);
  std::vector<Eigen::Matrix4d> transforms;
  Scene() {
    std::mt19937 rng(24);
    for (int i = 0; i < 7; ++i) transforms.push_back(random_affine(rng, grid_centre(ref)));
  }
  Evaluation run(const Variant& v, const std::string& threads,
                 const std::vector<Eigen::Matrix4d>& matrices) const {
    auto params = v.params;
    params["threads"] = threads;
    auto cost = make_cost(v.id, params);
    cost->set_reference(ref, &ref_weight);
    cost->set_moving(mov, nullptr);
    return evaluate(*cost, matrices);
  }
};

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(CostCpuProperties, BatchOfSevenEqualsSevenSingleCallsBitwise) {
  const Scene scene;
  for (const Variant& v : kVariants) {
    const Evaluation batched = scene.run(v, "3", scene.transforms);
    Evaluation single;
    for (const Eigen::Matrix4d& t : scene.transforms) {
      const Evaluation one = scene.run(v, "3", {t});
      single.costs.push_back(one.costs[0]);
      single.overlaps.push_back(one.overlaps[0]);
    }
    EXPECT_TRUE(bitwise_equal(batched.costs, single.costs)) << v.id;
    EXPECT_TRUE(bitwise_equal(batched.overlaps, single.overlaps)) << v.id;
  }
}

TEST(CostCpuProperties, ThreadCountNeverChangesABit) {
  const Scene scene;
  for (const Variant& v : kVariants) {
    const Evaluation one = scene.run(v, "1", scene.transforms);
    for (const char* threads : {"2", "4", "0"}) {
      const Evaluation many = scene.run(v, threads, scene.transforms);
      EXPECT_TRUE(bitwise_equal(one.costs, many.costs)) << v.id << " threads=" << threads;
      EXPECT_TRUE(bitwise_equal(one.overlaps, many.overlaps)) << v.id << " threads=" << threads;
    }
    // A negative control for the comparison itself: different transforms differ.
    EXPECT_NE(one.costs[0], one.costs[1]) << v.id;
  }
}

TEST(CostCpuProperties, CancellationStopsEvaluationWithCancelled) {
  HostServices services;
  auto cost = make_cost("cpu.cr", {}, &services);
  const Image image = random_image({5, 5, 5}, Eigen::Matrix4d::Identity(), 31);
  cost->set_reference(image, nullptr);
  cost->set_moving(image, nullptr);
  EXPECT_NO_THROW(evaluate_one(*cost, Eigen::Matrix4d::Identity()));
  services.request_cancel();
  try {
    evaluate_one(*cost, Eigen::Matrix4d::Identity());
    FAIL() << "evaluate ignored the cancellation";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_CANCELLED);
  }
}

}  // namespace
}  // namespace regpipe::test
