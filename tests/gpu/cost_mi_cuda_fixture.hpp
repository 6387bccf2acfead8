// What the cuda.mi GPU tests share: the built plugins, the chris_t1 / chris_PD levels, random
// transforms and the CPU reference costs (loaded once per test executable), and the parameters
// with which each scheme holds a bin count.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform.hpp>

#include <regpipe_common/prepared_image.hpp>
#include <regpipe_common/voxel_map.hpp>

#include "support/random_transforms.hpp"
#include "support/test_support.hpp"

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace regpipe::mi_test {

inline constexpr int kTransforms = 100;
inline constexpr double kLevels[] = {8, 4, 2, 1};
inline constexpr int kBins[] = {32, 64, 128, 256};
// (measure, bins, mm): "mi" or "nmi".
using CpuKey = std::tuple<std::string, int, double>;

// Shared across tests: plugins, the image levels and the CPU reference costs, computed once.
struct Fixture {
  PluginHost host{test::built_plugins()};
  HostServices services;
  std::map<double, std::pair<Image, Image>> levels;  // mm -> (reference, moving)
  std::map<double, std::vector<double>> matrices;    // mm -> 100 x 16
  std::map<CpuKey, std::vector<double>> cpu_costs, cpu_overlaps;
};

inline Fixture& fixture() {
  static Fixture f;
  return f;
}

// A level's images (fixture().levels) prepared and binned exactly as cpu.mi / cuda.mi do, for
// the tests that rebuild a histogram on the CPU.
struct BinnedPair {
  regpipe_common::PreparedImage ref, mov;
};

inline BinnedPair binned_pair(double mm, int bins) {
  const auto& [ref, mov] = fixture().levels.at(mm);
  const rp_image ref_view = ref.view(), mov_view = mov.view();
  BinnedPair p{regpipe_common::prepare_image(ref_view, nullptr, "reference"),
               regpipe_common::prepare_image(mov_view, nullptr, "moving")};
  regpipe_common::bin_voxels(p.ref, bins, "reference");
  regpipe_common::bin_voxels(p.mov, bins, "moving");
  return p;
}

// Calls visit(index, px, py, pz) for every reference voxel of `p` that maps inside the moving
// image under `matrix`, at the moving-voxel position plugins/cost_cpu/src/traversal.hpp samples
// (computed in double, rounded once to float).
template <class Visit>
void for_each_inside_voxel(const BinnedPair& p, const double* matrix, const Visit& visit) {
  regpipe_common::VoxelMap map;
  regpipe_common::make_voxel_map(p.ref.voxel_to_world, matrix, p.mov.voxel_to_world, &map);
  const double* m = map.m;
  const regpipe_common::Grid& g = p.ref.grid;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const float px = float(m[0] * x + m[1] * y + m[2] * z + m[3]);
        const float py = float(m[4] * x + m[5] * y + m[6] * z + m[7]);
        const float pz = float(m[8] * x + m[9] * y + m[10] * z + m[11]);
        if (!regpipe_common::inside(p.mov.grid, px, py, pz)) continue;
        visit(std::size_t(x) + std::size_t(g.nx) * (y + std::size_t(g.ny) * z), px, py, pz);
      }
}

inline std::unique_ptr<CostInstance> make_cost(const std::string& id, const std::map<std::string, std::string>& params) {
  const Component& c = fixture().host.require(RP_KIND_COST, id);
  return std::make_unique<CostInstance>(c, fixture().services, resolve_params(c, params));
}

// Loads the level images, transforms and CPU costs of `measure` on first use (false when the
// shared data is missing).
inline bool prepare_level(const std::string& measure, double mm, int bins) {
  Fixture& f = fixture();
  if (f.levels.count(mm) == 0) {
    const auto t1 = test::shared_data("chris_t1.nii.gz"), pd = test::shared_data("chris_PD.nii.gz");
    if (t1.empty() || pd.empty()) return false;
    const Component& r = f.host.require(RP_KIND_RESAMPLER, "resample.cpu");
    ResamplerInstance resampler(r, f.services, resolve_params(r, {}));
    Image ref = make_level(read_image(t1), mm, resampler);
    Image mov = make_level(read_image(pd), mm, resampler);
    f.matrices[mm] = test::random_affine_matrices(ref, 4321u + unsigned(mm), kTransforms);
    f.levels.emplace(mm, std::make_pair(std::move(ref), std::move(mov)));
  }
  const CpuKey key{measure, bins, mm};
  if (f.cpu_costs.count(key) == 0) {
    auto cpu = make_cost("cpu." + measure, {{"bins", std::to_string(bins)}});
    cpu->set_reference(f.levels.at(mm).first, nullptr);
    cpu->set_moving(f.levels.at(mm).second, nullptr);
    std::vector<double> costs(kTransforms), overlaps(kTransforms);
    cpu->evaluate(f.matrices.at(mm).data(), kTransforms, costs.data(), overlaps.data());
    f.cpu_costs[key] = costs;
    f.cpu_overlaps[key] = overlaps;
  }
  return true;
}

// cuda.<measure> with `params` on the pair of level `mm` (prepare_level first).
inline std::unique_ptr<CostInstance> gpu_cost_on_level(const std::string& measure,
                                                const std::map<std::string, std::string>& params, double mm) {
  auto gpu = make_cost("cuda." + measure, params);
  gpu->set_reference(fixture().levels.at(mm).first, nullptr);
  gpu->set_moving(fixture().levels.at(mm).second, nullptr);
  return gpu;
}

// Threads per block with which a scheme holds `bins`, 0 when it cannot. per_warp keeps a 32-bit
// histogram per warp: 256 x 256 x 4 bytes is more than a block may have, 128 x 128 fits three
// warps in 227 KB. per_thread_packed keeps one per thread, of counters of at least 2 bits: 32
// bins with 256 threads (4-bit counters), 64 with 64 (4-bit), 128 with 32 (2-bit), never 256.
inline int scheme_threads(const std::string& scheme, int bins) {
  if (scheme == "per_warp") return bins <= 64 ? 256 : bins == 128 ? 96 : 0;
  if (scheme == "per_thread_packed") return bins <= 32 ? 256 : bins <= 64 ? 64 : bins <= 128 ? 32 : 0;
  return 256;
}

// A scheme's parameters for `bins`, or an empty map when the scheme cannot hold that many.
inline std::map<std::string, std::string> scheme_params(const std::string& scheme, int bins) {
  const int threads = scheme_threads(scheme, bins);
  if (threads == 0) return {};
  return {{"scheme", scheme}, {"bins", std::to_string(bins)}, {"threads_per_block", std::to_string(threads)}};
}

// Why the GPU tests cannot run here ("" when they can).
inline std::string gpu_unavailable() {
  return test::gpu_component_unavailable(fixture().host, RP_KIND_COST, "cuda.mi").value_or("");
}

// A transform that moves the reference 10 m away: no voxel maps inside the moving image.
inline std::vector<double> far_away_matrix() { return {1, 0, 0, 1e4, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}; }

// Relative tolerance of an exact scheme against the CPU. Both sample in float with the same
// helpers and bin with the same bin_of, so every count is the same integer; what differs is
// the finish: sums of h log h in another order (a fixed tree on the GPU, left to right on the
// CPU) and the device's log (at most 1 ulp) against glibc's. Each entropy is log W - S / W with
// S ~ W log W ~ 10^8 at 1 mm: relative errors ~1e-16 of S per term, but the joint entropy
// sums up to 65536 terms, each order rounding differently (n eps ~ 7e-12 at worst), amplified
// by the cancellation in H(R) + H(M) - H(R,M) (MI ~ 0.3 against entropies ~ 5: x20). Measured
// on an H100: up to 3.6e-12 (2 mm, 256 bins). 1e-10 still catches a single misplaced count
// (~1e-8 relative at 2 mm, ~1e-9 at 1 mm).
inline constexpr double kExactTolerance = 1e-10;

}  // namespace regpipe::mi_test
