// Issue 2's acceptance cases on real images, for any cost (instantiated with the CPU costs in
// tests/registration and with the CUDA ones in tests/gpu):
//   (a) chris_t1 to itself with the moving header rotated 10 degrees and shifted 10 mm;
//   (b) a synthetic second contrast of chris_t1 (non-monotonic mapping + noise), same change;
//   (c) chris_PD to chris_t1 (not aligned in scanner space): registering after a known header
//       change T of the moving image must give the first result composed with T.
#pragma once

#include <regpipe/host/image.hpp>

#include "registration/registration_fixture.hpp"

namespace regpipe::test {

struct CostCase {
  const char* name;
  const char* cost;
  std::map<std::string, std::string> params;
};

inline void PrintTo(const CostCase& c, std::ostream* os) { *os << c.name; }

inline std::string case_name(const ::testing::TestParamInfo<CostCase>& i) { return i.param.name; }

class KnownTransform : public RegistrationTest, public ::testing::WithParamInterface<CostCase> {
 protected:
  void SetUp() override {
    if (const auto why = gpu_component_unavailable(plugins_, RP_KIND_COST, GetParam().cost)) GTEST_SKIP() << *why;
  }
};

}  // namespace regpipe::test

// The test bodies below are written against regpipe's names, as in the test files.
using namespace regpipe;
using regpipe::test::KnownTransform;

TEST_P(KnownTransform, SameImageWithHeaderChange) {
  REGPIPE_REQUIRE_DATA(path, "chris_t1.nii.gz");
  const Image t1 = read_image(path);
  const Eigen::Matrix4d truth = header_change(t1);
  const auto r = run(pipeline(GetParam().cost, GetParam().params), t1, with_world_transform(t1, truth));
  const double e = error_mm(r.ref_to_mov, truth, t1);
  std::printf("(a) %s: mean displacement error %.4f mm, %lld evaluations\n", GetParam().name, e, r.evaluations);
  EXPECT_LT(e, 0.1);
}

TEST_P(KnownTransform, SyntheticSecondContrastWithHeaderChange) {
  REGPIPE_REQUIRE_DATA(path, "chris_t1.nii.gz");
  const Image t1 = read_image(path);
  const Eigen::Matrix4d truth = header_change(t1);
  const Image other = with_world_transform(synthetic_contrast(t1, 7), truth);
  const auto r = run(pipeline(GetParam().cost, GetParam().params), t1, other);
  const double e = error_mm(r.ref_to_mov, truth, t1);
  std::printf("(b) %s: mean displacement error %.4f mm, %lld evaluations\n", GetParam().name, e, r.evaluations);
  EXPECT_LT(e, 0.2);
}

TEST_P(KnownTransform, RealMultiModalConsistencyUnderHeaderChange) {
  REGPIPE_REQUIRE_DATA(t1_path, "chris_t1.nii.gz");
  REGPIPE_REQUIRE_DATA(pd_path, "chris_PD.nii.gz");
  const Image t1 = read_image(t1_path);
  const Image pd = read_image(pd_path);
  const Eigen::Matrix4d change = header_change(pd);
  const auto m0 = run(pipeline(GetParam().cost, GetParam().params), t1, pd);
  const auto m1 = run(pipeline(GetParam().cost, GetParam().params), t1, with_world_transform(pd, change));
  // Moving the PD header by `change` moves every PD world point p to change*p, so the
  // reference->moving transform becomes change * M0.
  const double e = error_mm(m1.ref_to_mov, change * m0.ref_to_mov, t1);
  std::printf("(c) %s: M1 vs change*M0 mean displacement %.4f mm\n", GetParam().name, e);
  // chris_PD's 2.4 mm slices leave its 12-DOF optimum loosely determined: over 16 header
  // changes the pairs of cuda.cr's undone results lie 0.25-0.27 mm apart (median) and up to
  // 0.47-0.50 mm (bench/results/cost_cr.md, "fused: blocks by samples"); a last-bit change of the cost
  // moves this one pair between 0.37 and 0.51 mm. Far above is a registration that lost it.
  EXPECT_LT(e, 0.6);
}
