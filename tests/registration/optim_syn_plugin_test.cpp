// optim.syn (plugins/optim_syn) through the plugin host: a blob phantom warped by a known
// smooth random diffeomorphism, registered back with cpu.lcc and with cpu.ls as the dense
// cost (RP_EXT_DENSE_COST), judged by the endpoint error against the true field, the
// Jacobian and forward-then-inverse consistency; and the refusals of abi.h 1.5's contract.
#include "support/syn_known_warp_host.hpp"
#include "support/test_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace regpipe;
namespace rc = regpipe_common;

namespace {

PluginHost& host() {
  static PluginHost h(test::built_plugins());
  return h;
}
HostServices& services() {
  static HostServices s;
  return s;
}

std::unique_ptr<OptimizerInstance> make_syn(const std::map<std::string, std::string>& params = {}) {
  const Component& c = host().require(RP_KIND_OPTIMIZER, "optim.syn");
  return std::make_unique<OptimizerInstance>(c, services(), resolve_params(c, params));
}
std::unique_ptr<CostInstance> make_cost(const std::string& id, const std::map<std::string, std::string>& params = {}) {
  const Component& c = host().require(RP_KIND_COST, id);
  return std::make_unique<CostInstance>(c, services(), resolve_params(c, params));
}

// An axis-aligned LPS grid of `spacing` mm voxels centred on the origin.
rc::FieldGeometry centred_grid(int n, double spacing) {
  const double o = -0.5 * (n - 1) * spacing;
  return {{n, n, n}, {spacing, 0, 0, o, 0, spacing, 0, o, 0, 0, spacing, o, 0, 0, 0, 1}};
}

// A body (ellipsoid, soft edge) holding 120 Gaussian blobs of random amplitude and width.
std::vector<float> blob_phantom(const rc::FieldGeometry& grid, std::uint64_t seed) {
  struct Blob {
    rc::Vec3 centre;
    double amplitude, sigma;
  };
  const rc::Vec3 radii{46, 40, 42};
  std::mt19937_64 rng(seed);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * double(rng() >> 11) * 0x1p-53; };
  std::vector<Blob> blobs;
  while (blobs.size() < 120) {
    const rc::Vec3 c{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
    if (c.x * c.x + c.y * c.y + c.z * c.z > 0.8) continue;
    blobs.push_back({{c.x * radii.x, c.y * radii.y, c.z * radii.z}, uniform(-0.3, 0.6), uniform(3.0, 5.5)});
  }
  std::vector<float> image(rc::voxel_count(grid.dims));
  const rc::Grid& g = grid.dims;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const rc::Vec3 p = rc::world_of_voxel(grid, x, y, z);
        const double r = std::sqrt(p.x * p.x / (radii.x * radii.x) + p.y * p.y / (radii.y * radii.y) +
                                   p.z * p.z / (radii.z * radii.z));
        double v = 0.4 / (1.0 + std::exp((r - 1.0) * 25.0));
        for (const Blob& b : blobs) {
          const rc::Vec3 d = p - b.centre;
          v += b.amplitude * std::exp(-(d.x * d.x + d.y * d.y + d.z * d.z) / (2 * b.sigma * b.sigma));
        }
        image[x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z)] = float(std::max(0.0, 100.0 * v));
      }
  return image;
}

// 40^3 voxels of 3 mm warped by up to 4 mm.
const rc::syn_test::KnownWarp& phantom_case() {
  static const rc::syn_test::KnownWarp k = [] {
    const rc::FieldGeometry grid = centred_grid(40, 3.0);
    return rc::syn_test::known_warp(grid, blob_phantom(grid, 5), 4.0, 5.0, 11, 20.0f);
  }();
  return k;
}

// Measured (2 cores): cpu.lcc 0.349 mm mean endpoint error from 1.679, Jacobian min 0.80,
// forward then inverse mean 0.016 mm, 2.6 s; cpu.ls 0.405 mm, 0.78, 0.012 mm, 1.4 s.
// Two levels (shrink 2x1, sigmas 1x0 voxels), 30 iterations each: SyN[0.1, 3, 0].
const std::map<std::string, std::string> kSchedule = {
    {"iterations", "30x30"}, {"shrink_factors", "2x1"}, {"smoothing_sigmas", "1x0"}};

void register_and_check(const std::string& cost_id, const std::map<std::string, std::string>& cost_params,
                        double max_mean_endpoint_mm) {
  const auto& k = phantom_case();
  auto syn = make_syn(kSchedule);
  auto cost = make_cost(cost_id, cost_params);
  ASSERT_TRUE(syn->offers_deformable());
  ASSERT_TRUE(cost->offers_dense());
  double seconds = 0.0;
  const rc::syn::SynResult r = test::register_known_warp(*syn, *cost, k, &seconds);
  const rc::syn_test::Figures f = rc::syn_test::figures_of(r, k);
  std::printf("optim.syn + %s: %s; %.1f s\n", cost_id.c_str(), rc::syn_test::describe(f, r).c_str(), seconds);
  rc::syn_test::expect_within(f, {max_mean_endpoint_mm, 0.6, 0.0}, cost_id);
}

}  // namespace

TEST(OptimSynPlugin, RecoversAKnownWarpWithLocalCc) { register_and_check("cpu.lcc", {{"radius", "2"}}, 0.6); }

TEST(OptimSynPlugin, RecoversAKnownWarpWithLeastSquares) { register_and_check("cpu.ls", {}, 0.6); }

TEST(OptimSynPlugin, RefusesMinimize) {
  auto syn = make_syn();
  rp_objective objective{};
  objective.size = sizeof(objective);
  double x[RP_PARAM_COUNT] = {}, f = 0;
  try {
    syn->minimize(objective, x, &f);
    FAIL() << "minimize accepted";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("deformable"), std::string::npos) << e.what();
  }
}

TEST(OptimSynPlugin, RefusesACostWithoutTheDenseExtensionByName) {
  const auto& k = phantom_case();
  auto syn = make_syn(kSchedule);
  auto cost = make_cost("cpu.cr");
  ASSERT_FALSE(cost->offers_dense());
  rc::DisplacementField field = rc::zero_field(k.grid);
  rp_field forward = rc::field_view(field);
  const rp_image fixed = rc::syn_test::image_view(k.grid, k.fixed);
  try {
    syn->register_deformable(fixed, fixed, nullptr, nullptr, *cost, forward, nullptr);
    FAIL() << "a cost without RP_EXT_DENSE_COST was accepted";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("cpu.cr"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("RP_EXT_DENSE_COST"), std::string::npos) << e.what();
  }
}

TEST(OptimSynPlugin, RefusesAFieldOffTheFixedGrid) {
  const auto& k = phantom_case();
  auto syn = make_syn(kSchedule);
  auto cost = make_cost("cpu.ls");
  rc::DisplacementField other = rc::zero_field(centred_grid(20, 6.0)), same = rc::zero_field(k.grid);
  rp_field forward = rc::field_view(other);
  const rp_image fixed = rc::syn_test::image_view(k.grid, k.fixed);
  try {
    syn->register_deformable(fixed, fixed, nullptr, nullptr, *cost, forward, nullptr);
    FAIL() << "a field of another grid was accepted";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("forward_out"), std::string::npos) << e.what();
  }
  rp_field good = rc::field_view(same);
  rp_field shifted = good;
  shifted.voxel_to_world[3] += 1.5;  // same dims, another origin
  EXPECT_THROW(syn->register_deformable(fixed, fixed, nullptr, nullptr, *cost, good, &shifted), ComponentError);
}

TEST(OptimSynPlugin, RefusesBadSchedulesInCreate) {
  const Component& c = host().require(RP_KIND_OPTIMIZER, "optim.syn");
  auto refused = [&](const std::map<std::string, std::string>& params, const std::string& name) {
    try {
      OptimizerInstance o(c, services(), resolve_params(c, params));
      ADD_FAILURE() << "accepted " << name;
    } catch (const ComponentError& e) {
      EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  refused({{"iterations", "10x10"}}, "iterations");  // against 8x4x2x1
  refused({{"shrink_factors", "8x0x2x1"}}, "shrink_factors");
  refused({{"smoothing_sigmas", "3x2x-1x0"}}, "smoothing_sigmas");
  refused({{"iterations", "100xx50x20"}}, "iterations");
  refused({{"smoothing_sigmas", "3x2x1x0vox"}}, "smoothing_in_mm");
  refused({{"gradient_step", "0"}}, "gradient_step");
}

TEST(OptimSynPlugin, CancellationComesBackAsCancelled) {
  const auto& k = phantom_case();
  HostServices cancelling;
  cancelling.request_cancel();
  const Component& c = host().require(RP_KIND_OPTIMIZER, "optim.syn");
  OptimizerInstance syn(c, cancelling, resolve_params(c, kSchedule));
  auto cost = make_cost("cpu.ls");
  rc::DisplacementField field = rc::zero_field(k.grid);
  rp_field forward = rc::field_view(field);
  const rp_image fixed = rc::syn_test::image_view(k.grid, k.fixed), moving = rc::syn_test::image_view(k.grid, k.moving);
  try {
    syn.register_deformable(fixed, moving, nullptr, nullptr, *cost, forward, nullptr);
    FAIL() << "not cancelled";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_CANCELLED) << e.what();
  }
}
