// registration.decouple_grids against the artefact it exists for. The moving image is known
// transform case (b): a noisy synthetic second contrast of chris_t1 whose header was moved,
// so at the truth the two 1 mm level grids coincide. Every sample then lands on a moving
// voxel centre, interpolation stops averaging the noise, and 1 - CR has a cusp at exactly
// the truth: along x its lowest point lies 0.05 mm off. With the moving level 1/16 coarser
// (moving_level_mm) the profile is smooth and lowest at the truth.
#include "registration_fixture.hpp"

#include <regpipe/host/pyramid.hpp>

#include <cmath>

namespace regpipe::test {
namespace {

class DecoupleGridsTest : public RegistrationTest {};

// 1 - CR at the truth shifted by `offset_mm` along the reference's x.
double cost_at(CostInstance& cost, const Eigen::Matrix4d& truth, double offset_mm) {
  Eigen::Matrix4d shift = Eigen::Matrix4d::Identity();
  shift(0, 3) = offset_mm;
  const Eigen::Matrix4d m = truth * shift;
  double matrix[16];
  for (int i = 0; i < 16; ++i) matrix[i] = m(i / 4, i % 4);
  double c = 0.0;
  cost.evaluate(matrix, 1, &c);
  return c;
}

TEST_F(DecoupleGridsTest, ProfileThroughACoincidingTruthIsSmoothOnlyWhenDecoupled) {
  REGPIPE_REQUIRE_DATA(path, "chris_t1.nii.gz");
  const Image t1 = read_image(path);
  const Eigen::Matrix4d truth = header_change(t1);
  const Image moving = with_world_transform(synthetic_contrast(t1, 7), truth);
  RegistrationComponents c = create_registration_components(pipeline("cpu.cr", {{"bins", "256"}}), plugins_, services_);
  const Image reference = make_level(t1, 1.0, *c.resampler);
  c.cost->set_reference(reference, nullptr);

  constexpr int kSteps = 8;          // each side of the truth
  constexpr double kStepMm = 0.01;
  for (bool decouple : {false, true}) {
    const Image level = make_level(moving, moving_level_mm(1.0, decouple), *c.resampler);
    c.cost->set_moving(level, nullptr);
    std::vector<double> profile;
    for (int i = -kSteps; i <= kSteps; ++i) profile.push_back(cost_at(*c.cost, truth, i * kStepMm));
    const int lowest = int(std::min_element(profile.begin(), profile.end()) - profile.begin()) - kSteps;
    int reversals = 0;  // changes of direction: 1 for a smooth valley
    for (size_t i = 2; i < profile.size(); ++i)
      reversals += (profile[i] - profile[i - 1]) * (profile[i - 1] - profile[i - 2]) < 0.0;
    std::printf("decouple_grids %s: lowest at %+.2f mm, %d reversals of direction\n", decouple ? "true" : "false",
                lowest * kStepMm, reversals);
    if (decouple) {
      EXPECT_LE(std::abs(lowest), 1) << "decoupled: the lowest point should be the truth or its neighbour";
      EXPECT_EQ(reversals, 1) << "decoupled: the profile should be one smooth valley";
    } else {
      EXPECT_GE(std::abs(lowest), 3) << "aligned: the cusp this option exists for has gone; is it still needed?";
    }
  }
}

}  // namespace
}  // namespace regpipe::test
