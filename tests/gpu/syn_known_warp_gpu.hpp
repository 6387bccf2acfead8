// The GPU known-truth SyN tests' shared half (syn_known_warp_cuda_test.cpp, CC;
// syn_mattes_known_warp_cuda_test.cpp, Mattes MI): optim.syn with whole iterations on the GPU
// driving a dense GPU cost through the plugin host, and the figures recorded as test properties.
#pragma once

#include "support/syn_known_warp_host.hpp"
#include "support/test_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

namespace regpipe::test {

// Why the test cannot run here (no CUDA device, `cost_id` or optim.syn), or nothing.
inline std::optional<std::string> gpu_syn_unavailable(const PluginHost& host, const std::string& cost_id) {
  if (auto why = gpu_component_unavailable(host, RP_KIND_COST, cost_id)) return why;
  if (host.find(RP_KIND_OPTIMIZER, "optim.syn") == nullptr) return std::string("optim.syn is not built here");
  return std::nullopt;
}

// `k` registered back by optim.syn device: cuda with SyN[0.1, 3, 0], convergence
// [100x70x50, 1e-6, 10], shrink factors 4x2x1, smoothing 2x1x0vox, and `cost_id` with
// `cost_params`; its figures, also recorded as the test's properties; the wall time in *seconds.
inline regpipe_common::syn_test::Figures register_on_gpu(const PluginHost& host, const std::string& cost_id,
                                                         const std::map<std::string, std::string>& cost_params,
                                                         const regpipe_common::syn_test::KnownWarp& k,
                                                         regpipe_common::syn::SynResult* result, double* seconds) {
  HostServices services;
  const Component& oc = host.require(RP_KIND_OPTIMIZER, "optim.syn");
  OptimizerInstance syn(oc, services,
                        resolve_params(oc, {{"iterations", "100x70x50"}, {"shrink_factors", "4x2x1"},
                                            {"smoothing_sigmas", "2x1x0"}, {"device", "cuda"}}));
  const Component& cc = host.require(RP_KIND_COST, cost_id);
  CostInstance cost(cc, services, resolve_params(cc, cost_params));
  *result = register_known_warp(syn, cost, k, seconds);
  const regpipe_common::syn_test::Figures f = regpipe_common::syn_test::figures_of(*result, k);
  ::testing::Test::RecordProperty("mean_endpoint_mm", std::to_string(f.mean_endpoint_mm));
  ::testing::Test::RecordProperty("min_jacobian", std::to_string(f.min_jacobian));
  ::testing::Test::RecordProperty("max_consistency_mm", std::to_string(f.max_consistency_mm));
  return f;
}

}  // namespace regpipe::test
