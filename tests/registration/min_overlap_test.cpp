// registration.min_overlap against the trap it exists for: MI and NMI, estimated from a joint
// histogram of the samples in the overlap, score a sliver of a few samples (each alone in its
// row and column) better than the true alignment (NMI = 2, MI = log N). On chris_PD ->
// chris_t1 with 64 bins at every level, optim.flirt found such slivers: the 8 mm coarse search
// a 0.2% overlap with the image scaled 7.5 times (-MI -2.55 against -1.27 at the CR result),
// the 2 mm 9-DOF pass a 7.6-fold y scale, ending 391 mm (MI) and 208 mm (NMI) from the
// cpu.cr registration with 0% of the reference kept. With the rule (default 0.25 of the
// smaller image) both must land on the CR result.
//
// With registration.min_overlap: 0 this test's own schedule reproduces it: 391.8 mm (MI)
// and 208.4 mm (NMI) from the CR result.
//
// SLOW: three FLIRT schedules at 8/4/2 mm on the CPU, about 25 s on the 2-core build machine
// (Release). The schedule ends at 2 mm, where the slivers are already chosen.
//
// The bar, 1.5 mm mean displacement over the reference head from the cpu.cr result: the true
// alignment of this pair is unknown, and CR, MI and NMI are different measures whose optima
// need not coincide; at 12 DOF chris_PD's 130 mm slab leaves scales and skews weakly
// determined (issue 6's tests see 0.5 mm between equally good optima). Measured: MI 1.13 mm
// and NMI 1.14 mm at 8/4/2 mm (0.71 mm for MI over the full 8/4/2/1 schedule; at 6 DOF, where
// the trap is out of reach, 0.58 and 0.65 mm). The failures are hundreds of mm.
#include <regpipe/host/image.hpp>

#include "registration/registration_fixture.hpp"

#include <cstdio>
#include <string>

using namespace regpipe;
using regpipe::test::RegistrationTest;

namespace {

class MinOverlapTest : public RegistrationTest {};

long long below_min_overlap(const RegistrationResult& r) {
  long long n = 0;
  for (const StageRecord& s : r.stages) n += s.below_min_overlap;
  return n;
}

}  // namespace

TEST_F(MinOverlapTest, FlirtMiAndNmiAgreeWithCrOnChrisPd) {
  REGPIPE_REQUIRE_DATA(t1_path, "chris_t1.nii.gz");
  REGPIPE_REQUIRE_DATA(pd_path, "chris_PD.nii.gz");
  const Image t1 = read_image(t1_path);
  const Image pd = read_image(pd_path);
  const auto cr = run(flirt_to_2mm("cpu.cr", {{"bins", "256"}}), t1, pd);
  for (const char* cost : {"cpu.mi", "cpu.nmi"}) {
    const auto r = run(flirt_to_2mm(cost, {{"bins", "64"}}), t1, pd);
    const double e = error_mm(r.ref_to_mov, cr.ref_to_mov, t1);
    std::printf("chris_PD -> chris_t1, optim.flirt, %s 64 bins: %.3f mm from cpu.cr; %lld "
                "transforms below min_overlap scored as no overlap\n",
                cost, e, below_min_overlap(r));
    EXPECT_LT(e, 1.5) << cost;
  }
}
