// Issue 16's known-truth test at 1 mm on the GPU: chris_t1 on the pyramid's 1 mm grid warped
// by a smooth random diffeomorphism (exp of a random smooth velocity field by scaling and
// squaring, 6 mm at most, noise length scale 16 mm), registered back through the plugin host
// with cuda.lcc (radius 4) and optim.syn device: cuda, whole iterations on the GPU. Judged
// over the head against the true field (tests/support/syn_known_warp.hpp's figures): mean
// endpoint error below 0.5 mm, the Jacobian determinant positive at every voxel, forward then
// inverse within 0.1 mm. The CPU twins at 4 mm are tests/registration/syn_known_warp_test.cpp.
// Skipped without a CUDA device, cuda.lcc or optim.syn, or without chris_t1.nii.gz
// (REGPIPE_TEST_DATA).
#include "support/syn_known_warp_host.hpp"
#include "support/test_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <gtest/gtest.h>

#include <cstdio>

namespace regpipe::test {
namespace {

namespace rc = regpipe_common;

TEST(SynKnownWarpCuda, LocalCcRecoversASixMillimetreWarpOfChrisT1AtOneMillimetre) {
  REGPIPE_REQUIRE_DATA(path, "chris_t1.nii.gz");
  PluginHost host(built_plugins());
  HostServices services;
  if (const auto why = gpu_component_unavailable(host, RP_KIND_COST, "cuda.lcc")) GTEST_SKIP() << *why;
  if (host.find(RP_KIND_OPTIMIZER, "optim.syn") == nullptr) GTEST_SKIP() << "optim.syn is not built here";

  const rc::syn_test::KnownWarp k = chris_known_warp(path, 1.0, 6.0, 16.0, 21);
  // SyN[0.1, 3, 0], convergence [100x70x50, 1e-6, 10], shrink factors 4x2x1, smoothing 2x1x0vox.
  const Component& oc = host.require(RP_KIND_OPTIMIZER, "optim.syn");
  OptimizerInstance syn(oc, services,
                        resolve_params(oc, {{"iterations", "100x70x50"}, {"shrink_factors", "4x2x1"},
                                            {"smoothing_sigmas", "2x1x0"}, {"device", "cuda"}}));
  const Component& cc = host.require(RP_KIND_COST, "cuda.lcc");
  CostInstance cost(cc, services, resolve_params(cc, {{"radius", "4"}}));
  double seconds = 0.0;
  const rc::syn::SynResult r = register_known_warp(syn, cost, k, &seconds);

  const rc::syn_test::Figures f = rc::syn_test::figures_of(r, k);
  std::printf("6 mm warp, cuda.lcc radius 4, optim.syn device: cuda, chris_t1 at 1 mm (%dx%dx%d): %s; %.2f s\n",
              k.grid.dims.nx, k.grid.dims.ny, k.grid.dims.nz, rc::syn_test::describe(f, r).c_str(), seconds);
  RecordProperty("mean_endpoint_mm", std::to_string(f.mean_endpoint_mm));
  RecordProperty("min_jacobian", std::to_string(f.min_jacobian));
  RecordProperty("max_consistency_mm", std::to_string(f.max_consistency_mm));
  rc::syn_test::expect_within(f, {0.5, 0.5, 0.1, 0.05, 0.1}, "chris_t1 at 1 mm on the GPU");
}

}  // namespace
}  // namespace regpipe::test
