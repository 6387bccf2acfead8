// cpu.cr's head_weight_mm on the real multi-modal pair of issue 15 (docs/cr-real-pair.md):
// chris_PD -> chris_t1, where FLIRT's correlation ratio fits the two skin outlines and lands
// away from every MI-based result. With both heads' smooth weights it must land near cpu.mi's.
//
// SLOW: two FLIRT schedules (cpu.mi, then cpu.cr with head_weight_mm 2) at 8/4/2 mm, 12 DOF,
// about 30 s on the 2-core build machine. The 1 mm level (another 30 s a run) is left out to
// keep CI fast, so this holds the coarser schedule's agreement; the full schedule's figures
// over five header starts are in docs/cr-real-pair.md (0.31-0.36 mm from cpu.mi).
//
// Measured at 8/4/2 mm (mean displacement over chris_t1's head, this machine): head_weight_mm
// 2 lands 0.55 mm from cpu.mi, FLIRT's CR (head_weight_mm 0) 1.13 mm. The bar, 0.8 mm, fails
// FLIRT's CR by a margin and passes the option with room for the schedule's own spread.
#include <regpipe/host/image.hpp>

#include "registration/registration_fixture.hpp"

#include <cstdio>
#include <string>

using namespace regpipe;
using regpipe::test::RegistrationTest;

namespace {

class CrHeadWeightTest : public RegistrationTest {};

}  // namespace

TEST_F(CrHeadWeightTest, ChrisPdLandsNearMutualInformation) {
  REGPIPE_REQUIRE_DATA(t1_path, "chris_t1.nii.gz");
  REGPIPE_REQUIRE_DATA(pd_path, "chris_PD.nii.gz");
  const Image t1 = read_image(t1_path);
  const Image pd = read_image(pd_path);
  const auto mi = run(flirt_to_2mm("cpu.mi", {{"bins", "64"}}), t1, pd);
  const auto cr = run(flirt_to_2mm("cpu.cr", {{"bins", "256"}, {"head_weight_mm", "2"}}), t1, pd);
  const double e = error_mm(cr.ref_to_mov, mi.ref_to_mov, t1);
  std::printf("chris_PD -> chris_t1, optim.flirt 8/4/2 mm: cpu.cr head_weight_mm 2 lands %.3f mm from cpu.mi "
              "(FLIRT's CR: 1.13 mm)\n", e);
  EXPECT_LT(e, 0.8);
}
