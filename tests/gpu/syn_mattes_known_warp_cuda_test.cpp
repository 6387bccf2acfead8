// Issue 16's multi-modal known-truth test on the GPU: chris_t1 on the pyramid's 2 mm and 1 mm
// grids warped by a smooth random diffeomorphism (exp of a random smooth velocity field, 6 mm at
// most, noise length scale 16 mm), the warped image given a synthetic second contrast that no
// monotonic map relates to the first (inverted, with a ripple whose slope changes the map's
// direction), registered back through the plugin host with cuda.mattes (32 bins) and optim.syn
// device: cuda. Judged over the head against the true field (tests/support/syn_known_warp.hpp):
// mean endpoint error below 0.75 of the voxel size and below half the identity's, the Jacobian
// determinant positive at every voxel, forward then inverse consistent. The CPU twin at 4 mm is
// tests/registration/syn_known_warp_test.cpp (Mattes MI, 0.72 mm). Skipped without a CUDA
// device, cuda.mattes or optim.syn, or without chris_t1.nii.gz (REGPIPE_TEST_DATA).
#include "syn_known_warp_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace regpipe::test {
namespace {

namespace rc = regpipe_common;

class SynMattesKnownWarpCuda : public ::testing::TestWithParam<double> {};

TEST_P(SynMattesKnownWarpCuda, RecoversASixMillimetreWarpAcrossASyntheticSecondContrast) {
  const double mm = GetParam();
  REGPIPE_REQUIRE_DATA(path, "chris_t1.nii.gz");
  PluginHost host(built_plugins());
  if (const auto why = gpu_syn_unavailable(host, "cuda.mattes")) GTEST_SKIP() << *why;

  rc::syn_test::KnownWarp k = chris_known_warp(path, mm, 6.0, 16.0 / mm, 21);
  float top = 0.0f;
  for (float v : k.fixed) top = std::max(top, v);
  for (float& v : k.moving) v = top - v + 0.1f * top * std::sin(v / (0.05f * top));
  rc::syn::SynResult r;
  double seconds = 0.0;
  const rc::syn_test::Figures f = register_on_gpu(host, "cuda.mattes", {{"bins", "32"}}, k, &r, &seconds);
  std::printf("6 mm warp, second contrast, cuda.mattes 32 bins, optim.syn device: cuda, chris_t1 at %g mm (%dx%dx%d): "
              "%s; %.2f s\n",
              mm, k.grid.dims.nx, k.grid.dims.ny, k.grid.dims.nz, rc::syn_test::describe(f, r).c_str(), seconds);
  rc::syn_test::expect_within(f, {0.75 * mm, 0.5, 0.2, 0.05, 0.3}, "Mattes MI on the GPU, second contrast");
}

INSTANTIATE_TEST_SUITE_P(VoxelSizes, SynMattesKnownWarpCuda, ::testing::Values(2.0, 1.0),
                         [](const ::testing::TestParamInfo<double>& info) {
                           return info.param == 1.0 ? std::string("OneMillimetre") : std::string("TwoMillimetres");
                         });

}  // namespace
}  // namespace regpipe::test
