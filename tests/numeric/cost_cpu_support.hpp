// Shared helpers of the cost_cpu tests: the plugin loaded through the host, image builders and
// random transforms.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <Eigen/Core>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace regpipe::test {

// The five component ids, for tests that run over all of them.
inline const std::vector<std::string> kCostCpuIds = {"cpu.cr", "cpu.mi", "cpu.nmi", "cpu.ncc",
                                                     "cpu.ls"};

// Host services shared by the tests (tests that cancel use their own).
HostServices& cost_services();

// The component `id` as the plugin host found it in the build's plugin folder.
const Component& cost_component(const std::string& id);

// A cpu.* cost created through the plugin host with `params` (texts as in YAML).
std::unique_ptr<CostInstance> make_cost(const std::string& id,
                                        const std::map<std::string, std::string>& params = {},
                                        HostServices* services = nullptr);

// An image on the grid `dims` with the given voxel_to_world and values (x fastest).
Image make_image(std::array<uint32_t, 3> dims, const std::vector<float>& values,
                 const Eigen::Matrix4d& voxel_to_world = Eigen::Matrix4d::Identity());

// Uniform random values in [lo, hi) (deterministic for a seed).
Image random_image(std::array<uint32_t, 3> dims, const Eigen::Matrix4d& voxel_to_world,
                   uint32_t seed, float lo = 0.f, float hi = 100.f);

// Random weights in [0, 1] with about a fifth of the voxels exactly 0.
Image random_weight(const Image& like, uint32_t seed);

// Translation by (x, y, z) mm.
Eigen::Matrix4d translation(double x, double y, double z);

// An affine of moderate size about `centre`: rotations up to 0.35 rad, translations up to
// 3 mm, scales in [0.85, 1.15], skews up to 0.08. Some voxels of a small image leave.
Eigen::Matrix4d random_affine(std::mt19937& rng, const Eigen::Vector3d& centre);

// World coordinates of an image's grid centre.
Eigen::Vector3d grid_centre(const Image& image);

// Row-major copies of Eigen matrices, as the ABI takes them.
std::vector<double> row_major(const std::vector<Eigen::Matrix4d>& matrices);

// Costs (and overlaps) of every matrix, in one batched call.
struct Evaluation {
  std::vector<double> costs, overlaps;
};
Evaluation evaluate(CostInstance& cost, const std::vector<Eigen::Matrix4d>& matrices);
double evaluate_one(CostInstance& cost, const Eigen::Matrix4d& matrix, double* overlap = nullptr);

}  // namespace regpipe::test
