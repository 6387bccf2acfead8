// Bad input to the cpu.* costs: a clear RP_INVALID_ARGUMENT naming the thing and the value,
// never a crash, an exception across the ABI or a NaN.
#include "cost_cpu_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace regpipe::test {
namespace {

// Runs `call`, expecting a ComponentError with `status` whose message contains `text`.
void expect_error(const std::function<void()>& call, const std::string& text,
                  rp_status status = RP_INVALID_ARGUMENT) {
  try {
    call();
    ADD_FAILURE() << "no error; expected: " << text;
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << text;
  }
}

Image cube(float fill = 0.f) {
  Image image = random_image({4, 4, 4}, Eigen::Matrix4d::Identity(), 7);
  if (fill != 0.f) std::fill(image.data.begin(), image.data.end(), fill);
  return image;
}

TEST(CostCpuErrors, ConstantImagesAreRefusedWhereTheMeasureIsUndefined) {
  const std::map<std::string, std::string> measure = {{"cpu.cr", "correlation ratio"},
                                                      {"cpu.mi", "mutual information"},
                                                      {"cpu.nmi", "normalised mutual information"},
                                                      {"cpu.ncc", "normalised cross-correlation"}};
  for (const auto& [id, name] : measure) {
    auto cost = make_cost(id);
    expect_error([&] { cost->set_reference(cube(5.f), nullptr); },
                 "reference image is constant (value 5): " + name + " is undefined");
    expect_error([&] { cost->set_moving(cube(5.f), nullptr); },
                 "moving image is constant (value 5): " + name + " is undefined");
  }
  // Constant where the weight is > 0 is constant too: only voxels 3 and 9 count, both 2.5.
  Image image = cube(), weight = cube(1.f);
  weight.data.assign(weight.data.size(), 0.f);
  weight.data[3] = weight.data[9] = 1.f;
  image.data[3] = image.data[9] = 2.5f;
  expect_error([&] { make_cost("cpu.cr")->set_reference(image, &weight); },
               "reference image is constant (value 2.5) where its weight is > 0: correlation "
               "ratio is undefined");
  // Least squares is defined for any images.
  auto ls = make_cost("cpu.ls");
  EXPECT_NO_THROW(ls->set_reference(cube(5.f), nullptr));
  EXPECT_NO_THROW(ls->set_moving(cube(5.f), nullptr));
  EXPECT_EQ(evaluate_one(*ls, Eigen::Matrix4d::Identity()), 0.0);
}

TEST(CostCpuErrors, MalformedImagesAreRefusedWithSpecificMessages) {
  auto cost = make_cost("cpu.cr");
  Image empty = cube();
  empty.dims = {0, 4, 4};
  expect_error([&] { cost->set_reference(empty, nullptr); },
               "reference image has dims 0x4x4; every dimension must be between 1");

  Image singular = cube();
  singular.voxel_to_world(2, 2) = 0.0;
  expect_error([&] { cost->set_moving(singular, nullptr); },
               "moving image voxel_to_world is singular");

  Image not_finite = cube();
  not_finite.voxel_to_world(0, 3) = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { cost->set_reference(not_finite, nullptr); },
               "reference image voxel_to_world has a non-finite entry (nan) at row 0, column 3");

  Image nan_voxel = cube();
  nan_voxel.data[1 + 4 * (2 + 4 * 3)] = std::numeric_limits<float>::infinity();
  expect_error([&] { cost->set_reference(nan_voxel, nullptr); },
               "reference image has a non-finite value (inf) at voxel (1, 2, 3)");
}

TEST(CostCpuErrors, WeightsMustShareTheGridAndBeNonNegative) {
  auto cost = make_cost("cpu.ncc");
  const Image image = cube();
  Image small = random_image({3, 4, 4}, Eigen::Matrix4d::Identity(), 8);
  expect_error([&] { cost->set_reference(image, &small); },
               "reference weight has dims 3x4x4 but the reference image has 4x4x4");

  Image shifted = cube(1.f);
  shifted.voxel_to_world(1, 3) = 2.0;
  expect_error([&] { cost->set_moving(image, &shifted); },
               "moving weight's voxel_to_world differs from the moving image's at row 1, column 3");

  Image negative = cube(1.f);
  negative.data[2] = -0.5f;
  expect_error([&] { cost->set_reference(image, &negative); },
               "reference weight has a negative value (-0.5) at voxel (2, 0, 0)");

  Image zero = cube(1.f);
  zero.data.assign(zero.data.size(), 0.f);
  expect_error([&] { cost->set_moving(image, &zero); }, "moving weight is 0 everywhere");
}

TEST(CostCpuErrors, BadTransformsAreRefusedBeforeAnyWork) {
  auto cost = make_cost("cpu.mi");
  cost->set_reference(cube(), nullptr);
  cost->set_moving(cube(), nullptr);
  Eigen::Matrix4d singular = Eigen::Matrix4d::Identity();
  singular(1, 1) = 0.0;
  Eigen::Matrix4d infinite = Eigen::Matrix4d::Identity();
  infinite(2, 3) = std::numeric_limits<double>::infinity();
  Eigen::Matrix4d projective = Eigen::Matrix4d::Identity();
  projective(3, 0) = 0.5;
  const Eigen::Matrix4d id = Eigen::Matrix4d::Identity();
  expect_error(
      [&] {
        evaluate(*cost, {id, singular});
      },
      "transform 1 of 2 (reference world -> moving world) is singular");
  expect_error([&] { evaluate(*cost, {infinite}); },
               "has a non-finite entry (inf) at row 2, column 3");
  expect_error(
      [&] {
        evaluate(*cost, {id, id, projective});
      },
      "transform 2 of 3 (reference world -> moving world) has last row (0.5, 0, 0, 1)");
}

TEST(CostCpuErrors, EvaluateNeedsBothImages) {
  auto cost = make_cost("cpu.ls");
  expect_error([&] { evaluate_one(*cost, Eigen::Matrix4d::Identity()); },
               "evaluate needs a reference image: call set_reference first");
  cost->set_reference(cube(), nullptr);
  expect_error([&] { evaluate_one(*cost, Eigen::Matrix4d::Identity()); },
               "evaluate needs a moving image: call set_moving first");
}

TEST(CostCpuErrors, CreateRechecksParameters) {
  const Component& c = cost_component("cpu.mi");
  auto params = resolve_params(c, {});
  params["bins"].int_value = 1;  // past the host's validation
  expect_error([&] { CostInstance instance(c, cost_services(), params); },
               "bins=1 is outside [2, 1024]");

  params = resolve_params(cost_component("cpu.cr"), {});
  params["border_mm"].double_value = std::nan("");  // compares false with both bounds
  expect_error([&] { CostInstance instance(cost_component("cpu.cr"), cost_services(), params); },
               "border_mm is not a finite number");

  params = resolve_params(c, {{"interpolation", "nearest"}, {"partial_volume", "true"}});
  expect_error([&] { CostInstance instance(c, cost_services(), params); },
               "partial_volume=true spreads each sample over its 8 trilinear neighbours and "
               "cannot be combined with interpolation=nearest");
}

}  // namespace
}  // namespace regpipe::test
