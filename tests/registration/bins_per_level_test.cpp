// registration.bins_per_level against the trap it exists for: at 8 mm, cpu.cr with 256 bins
// can score a near-empty overlap (a few samples, one per bin: every bin's variance 0) as well
// as the true alignment. With FLIRT's 32 bins at 8 mm the truth must beat every such overlap.
// (Translations of this near-self pair do not reach the trap with 256 bins either, only
// rotation searches on chris_PD did (docs/flirt-search.md): both bin counts are printed.)
#include "registration_fixture.hpp"

#include <regpipe/host/pyramid.hpp>

#include <algorithm>
#include <limits>
#include <random>

namespace regpipe::test {
namespace {

class BinsPerLevelTest : public RegistrationTest {};

// The lowest cost among translations along x that keep between 0 and 5% of the reference
// inside the moving image.
double best_near_empty_cost(CostInstance& cost, double width_mm) {
  double best = std::numeric_limits<double>::infinity();
  for (double t = 0.5 * width_mm; t <= 1.5 * width_mm; t += 0.5) {
    for (double sign : {-1.0, 1.0}) {
      Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
      m(0, 3) = sign * t;
      double matrix[16];
      for (int i = 0; i < 16; ++i) matrix[i] = m(i / 4, i % 4);
      double c = 0.0, overlap = 0.0;
      cost.evaluate(matrix, 1, &c, &overlap);
      if (overlap > 0.0 && overlap < 0.05) best = std::min(best, c);
    }
  }
  return best;
}

TEST_F(BinsPerLevelTest, TruthBeatsNearEmptyOverlapsAtEightMillimetres) {
  REGPIPE_REQUIRE_DATA(path, "chris_t1.nii.gz");
  const Image t1 = read_image(path);
  Pipeline p = pipeline("cpu.cr", {{"bins", "256"}});
  p.registration.levels_mm = {8};
  p.registration.bins_per_level = true;
  RegistrationComponents c = create_registration_components(p, plugins_, services_);
  ASSERT_EQ(c.level_costs.size(), 1u);
  // The moving image: chris_t1 with noise, so that the truth's cost is not 0 either.
  Image noisy = t1;
  std::mt19937 random(7);
  std::normal_distribution<float> noise(0.0f, 2.0f * foreground_threshold(t1));
  for (float& v : noisy.data) v += noise(random);
  const Image level = make_level(t1, 8.0, *c.resampler);
  const Image moving = make_level(noisy, 8.0, *c.resampler);
  const double width_mm = level.dims[0] * 8.0;

  double truth[2], near_empty[2];
  CostInstance* costs[2] = {c.cost.get(), c.level_costs[0].get()};  // 256 bins, 32 bins
  for (int i = 0; i < 2; ++i) {
    costs[i]->set_reference(level, nullptr);
    costs[i]->set_moving(moving, nullptr);
    const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    costs[i]->evaluate(identity, 1, &truth[i]);
    near_empty[i] = best_near_empty_cost(*costs[i], width_mm);
  }
  std::printf("8 mm, 1 - CR: 256 bins truth %.4f, best near-empty overlap %.4f; "
              "32 bins (bins_per_level) truth %.4f, best near-empty overlap %.4f\n",
              truth[0], near_empty[0], truth[1], near_empty[1]);
  ASSERT_TRUE(std::isfinite(near_empty[1])) << "no translation gave a 0-5% overlap";
  EXPECT_LT(truth[1], near_empty[1]) << "with 32 bins a near-empty overlap still scores as well as the truth";
}

}  // namespace
}  // namespace regpipe::test
