// Issue 16's known-truth test at 1 mm on the GPU: chris_t1 on the pyramid's 1 mm grid warped
// by a smooth random diffeomorphism (exp of a random smooth velocity field by scaling and
// squaring, 6 mm at most, noise length scale 16 mm), registered back through the plugin host
// with cuda.lcc (radius 4) and optim.syn device: cuda, whole iterations on the GPU. Judged
// over the head against the true field (tests/support/syn_known_warp.hpp's figures): mean
// endpoint error below 0.5 mm, the Jacobian determinant positive at every voxel, forward then
// inverse within 0.1 mm. The CPU twins at 4 mm are tests/registration/syn_known_warp_test.cpp.
// Skipped without a CUDA device, cuda.lcc or optim.syn, or without chris_t1.nii.gz
// (REGPIPE_TEST_DATA).
#include "syn_known_warp_gpu.hpp"

#include <cstdio>

namespace regpipe::test {
namespace {

namespace rc = regpipe_common;

TEST(SynKnownWarpCuda, LocalCcRecoversASixMillimetreWarpOfChrisT1AtOneMillimetre) {
  REGPIPE_REQUIRE_DATA(path, "chris_t1.nii.gz");
  PluginHost host(built_plugins());
  if (const auto why = gpu_syn_unavailable(host, "cuda.lcc")) GTEST_SKIP() << *why;

  const rc::syn_test::KnownWarp k = chris_known_warp(path, 1.0, 6.0, 16.0, 21);
  rc::syn::SynResult r;
  double seconds = 0.0;
  const rc::syn_test::Figures f = register_on_gpu(host, "cuda.lcc", {{"radius", "4"}}, k, &r, &seconds);
  std::printf("6 mm warp, cuda.lcc radius 4, optim.syn device: cuda, chris_t1 at 1 mm (%dx%dx%d): %s; %.2f s\n",
              k.grid.dims.nx, k.grid.dims.ny, k.grid.dims.nz, rc::syn_test::describe(f, r).c_str(), seconds);
  rc::syn_test::expect_within(f, {0.5, 0.5, 0.1, 0.05, 0.1}, "chris_t1 at 1 mm on the GPU");
}

}  // namespace
}  // namespace regpipe::test
