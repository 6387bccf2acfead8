// What the gpu tests of the dense costs (cuda.lcc, cuda.ls, cuda.mattes against cpu.lcc,
// cpu.ls, cpu.mattes) share: the plugin host, a pair of images on an oblique or an axis-aligned
// anisotropic grid with a fixed mask, the dense request from host or device memory, and the
// comparison of a GPU result with its CPU reference.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe_common/fields/abi_views.hpp>

#include "support/test_support.hpp"

#include <Eigen/Geometry>
#include <gtest/gtest.h>

#ifdef REGPIPE_TESTS_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace regpipe::test::dense_cost {

struct Plugins {
  PluginHost host{built_plugins()};
  HostServices services;
};

inline Plugins& plugins() {
  static Plugins p;
  return p;
}

inline std::unique_ptr<CostInstance> make_cost(const std::string& id,
                                               const std::map<std::string, std::string>& params = {}) {
  const Component& c = plugins().host.require(RP_KIND_COST, id);
  return std::make_unique<CostInstance>(c, plugins().services, resolve_params(c, params));
}

// Why `id` cannot run here ("" when it can).
inline std::string gpu_unavailable(const std::string& id) {
  return gpu_component_unavailable(plugins().host, RP_KIND_COST, id).value_or("");
}

inline constexpr uint32_t kNx = 37, kNy = 30, kNz = 26;  // not multiples of 32: partial blocks and warps
inline constexpr std::size_t kVoxels = std::size_t(kNx) * kNy * kNz;

inline Eigen::Matrix4d oblique_grid() {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = Eigen::AngleAxisd(0.5, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix() *
                            Eigen::Vector3d(1.5, 1.2, 1.8).asDiagonal();
  m.topRightCorner<3, 1>() = Eigen::Vector3d(-14, -12, -10);
  return m;
}

inline Eigen::Matrix4d axis_grid() {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = Eigen::Vector3d(1.2, 0.9, 1.5).asDiagonal();
  m.topRightCorner<3, 1>() = Eigen::Vector3d(20, -5, 3);
  return m;
}

// Smooth blobs plus a little noise, intensities in the hundreds, a flat region (the fixed
// image is constant where x < 4), and a mask of values 1, 0.5, -1 and 0 (> 0 counts).
struct DenseCase {
  Eigen::Matrix4d v2w;
  std::vector<float> fixed, moving, mask;
  explicit DenseCase(const Eigen::Matrix4d& grid) : v2w(grid) {
    std::mt19937 rng(7);
    std::normal_distribution<float> noise(0.f, 2.f);
    for (std::size_t i = 0; i < kVoxels; ++i) {
      const double x = double(i % kNx), y = double(i / kNx % kNy), z = double(i / (kNx * kNy));
      const double f = 300 + 100 * std::exp(-((x - 15) * (x - 15) + (y - 12) * (y - 12) + (z - 10) * (z - 10)) / 60) +
                       60 * std::sin(0.3 * x + 0.2 * y) * std::cos(0.25 * z);
      const double m = 250 + 90 * std::exp(-((x - 16) * (x - 16) + (y - 13) * (y - 13) + (z - 11) * (z - 11)) / 55) +
                       50 * std::sin(0.28 * x + 0.22 * y + 0.1) * std::cos(0.24 * z);
      fixed.push_back(x < 4 ? 300.f : float(f) + noise(rng));
      moving.push_back(float(m) + noise(rng));
      const double r2 = (x - 18) * (x - 18) + (y - 15) * (y - 15) + (z - 13) * (z - 13);
      mask.push_back(r2 < 110 ? (r2 < 50 ? 1.f : 0.5f) : (r2 < 130 ? -1.f : 0.f));
    }
  }
  rp_dense_cost_request request(bool masked, double* cost, float* gradient) const {
    regpipe_common::FieldGeometry grid{{int(kNx), int(kNy), int(kNz)}, {}};
    for (int k = 0; k < 16; ++k) grid.voxel_to_world[k] = v2w(k / 4, k % 4);
    return regpipe_common::dense_cost_request(
        grid, {fixed.data(), moving.data(), masked ? mask.data() : nullptr, cost, gradient});
  }
};

struct DenseResult {
  double cost = 0;
  std::vector<float> gradient = std::vector<float>(3 * kVoxels);
};

inline DenseResult evaluate_on_host(CostInstance& cost, const DenseCase& c, bool masked) {
  DenseResult out;
  cost.evaluate_dense(c.request(masked, &out.cost, out.gradient.data()));
  return out;
}

#ifdef REGPIPE_TESTS_WITH_CUDA
// The request's images copied to device 0, its gradient written there and copied back.
inline DenseResult evaluate_on_device(CostInstance& cost, rp_dense_cost_request r) {
  DenseResult out;
  const std::size_t bytes = kVoxels * sizeof(float);
  float *fixed = nullptr, *moving = nullptr, *mask = nullptr, *gradient = nullptr;
  EXPECT_EQ(cudaMalloc(&fixed, bytes), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&moving, bytes), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&gradient, 3 * bytes), cudaSuccess);
  cudaMemcpy(fixed, r.fixed, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(moving, r.moving, bytes, cudaMemcpyHostToDevice);
  if (r.fixed_mask != nullptr) {
    EXPECT_EQ(cudaMalloc(&mask, bytes), cudaSuccess);
    cudaMemcpy(mask, r.fixed_mask, bytes, cudaMemcpyHostToDevice);
  }
  r.memory = RP_MEMORY_DEVICE;
  r.device = 0;
  r.fixed = fixed;
  r.moving = moving;
  r.fixed_mask = mask;
  r.gradient_out = gradient;
  r.cost_out = &out.cost;
  try {
    cost.evaluate_dense(r);
  } catch (...) {
    cudaFree(fixed), cudaFree(moving), cudaFree(mask), cudaFree(gradient);
    throw;
  }
  EXPECT_EQ(cudaMemcpy(out.gradient.data(), gradient, 3 * bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(fixed), cudaFree(moving), cudaFree(mask), cudaFree(gradient);
  return out;
}
#endif

// A NaN at moving voxel 123 is refused with the CPU references' message, from host memory and
// (where the tests are built with CUDA) from device memory.
inline void expect_refuses_non_finite(CostInstance& cost) {
  DenseCase c(axis_grid());
  c.moving[123] = std::nanf("");
  double value = 0;
  try {
    cost.evaluate_dense(c.request(false, &value, nullptr));
    ADD_FAILURE() << "accepted a NaN";
  } catch (const ComponentError& e) {
    EXPECT_EQ(e.status(), RP_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("moving voxel 123 is not finite"), std::string::npos) << e.what();
  }
#ifdef REGPIPE_TESTS_WITH_CUDA
  try {
    evaluate_on_device(cost, c.request(false, nullptr, nullptr));
    ADD_FAILURE() << "accepted a NaN in device memory";
  } catch (const ComponentError& e) {
    EXPECT_NE(std::string(e.what()).find("moving voxel 123 is not finite"), std::string::npos) << e.what();
  }
#endif
}

// How far a GPU result is from its CPU reference.
struct Difference {
  double cost_relative = 0;      // |gpu - cpu| / |cpu|
  double gradient_relative = 0;  // largest |gpu - cpu| over the reference's largest component
};

// Expects the cost within `cost_tolerance` relative and the world gradient within
// `gradient_tolerance` of its largest component; returns the differences found.
inline Difference expect_same(const DenseResult& cpu, const DenseResult& gpu, const std::string& what,
                              double cost_tolerance = 1e-9, double gradient_tolerance = 1e-5) {
  Difference d;
  EXPECT_NE(cpu.cost, 0.0) << what;
  d.cost_relative = std::fabs(gpu.cost - cpu.cost) / std::fabs(cpu.cost);
  EXPECT_LE(d.cost_relative, cost_tolerance) << what << ": gpu " << gpu.cost << " cpu " << cpu.cost;
  double largest = 0, worst = 0;
  std::size_t worst_at = 0;
  for (float g : cpu.gradient) largest = std::max(largest, double(std::fabs(g)));
  for (std::size_t i = 0; i < cpu.gradient.size(); ++i) {
    const double e = std::fabs(double(gpu.gradient[i]) - double(cpu.gradient[i]));
    if (e > worst) worst = e, worst_at = i;
  }
  EXPECT_GT(largest, 0.0) << what;
  d.gradient_relative = largest > 0 ? worst / largest : 0;
  EXPECT_LE(d.gradient_relative, gradient_tolerance)
      << what << ": gradient component " << worst_at << " gpu " << gpu.gradient[worst_at] << " cpu "
      << cpu.gradient[worst_at];
  return d;
}

// The affine evaluate's inputs: the reference on the case's grid, the moving image on another
// (a real resampling), weights for both, and 5 transforms about the overlap of the two grids.
struct AffineCase {
  Image ref, mov, ref_weight, mov_weight;
  std::vector<double> matrices;
  explicit AffineCase(const DenseCase& c) {
    ref.dims = mov.dims = {kNx, kNy, kNz};
    ref.voxel_to_world = c.v2w;
    mov.voxel_to_world = axis_grid();
    ref.data = c.fixed;
    mov.data = c.moving;
    ref_weight = ref;
    mov_weight = mov;
    for (std::size_t i = 0; i < kVoxels; ++i) {
      ref_weight.data[i] = std::max(0.f, c.mask[i]);
      mov_weight.data[i] = 0.3f + 0.7f * float(i % kNx) / float(kNx - 1);
    }
    const Eigen::Vector3d ref_centre = (c.v2w * Eigen::Vector4d(kNx / 2.0, kNy / 2.0, kNz / 2.0, 1)).head<3>();
    const Eigen::Vector3d mov_centre = (axis_grid() * Eigen::Vector4d(kNx / 2.0, kNy / 2.0, kNz / 2.0, 1)).head<3>();
    for (int t = 0; t < 5; ++t) {
      Eigen::Affine3d a = Eigen::Translation3d(mov_centre + Eigen::Vector3d(t - 2.0, 0.5 * t, -0.3 * t)) *
                          Eigen::AngleAxisd(0.05 * t, Eigen::Vector3d(0.3, 1, 0.2).normalized()) *
                          Eigen::Scaling(1.0 + 0.02 * (t - 2)) * Eigen::Translation3d(-ref_centre);
      for (int k = 0; k < 16; ++k) matrices.push_back(a.matrix()(k / 4, k % 4));
    }
  }
  std::size_t count() const { return matrices.size() / 16; }
  void set_images(CostInstance& cost, bool weighted) const {
    cost.set_reference(ref, weighted ? &ref_weight : nullptr);
    cost.set_moving(mov, weighted ? &mov_weight : nullptr);
  }
};

// The affine evaluate of `gpu` against `cpu` on the case's images and transforms: each cost
// within 1e-9 relative, each overlap within 1e-12, and one transform alone as in the batch.
inline void expect_affine_same(CostInstance& cpu, CostInstance& gpu, const AffineCase& a, bool weighted,
                               const std::string& what) {
  const std::size_t k = a.count();
  a.set_images(cpu, weighted);
  a.set_images(gpu, weighted);
  std::vector<double> expected(k), expected_overlap(k), got(k), got_overlap(k);
  cpu.evaluate(a.matrices.data(), k, expected.data(), expected_overlap.data());
  gpu.evaluate(a.matrices.data(), k, got.data(), got_overlap.data());
  for (std::size_t t = 0; t < k; ++t) {
    EXPECT_NE(expected[t], 0.0) << "transform " << t << " leaves no overlap: fix the test";
    EXPECT_LE(std::fabs(got[t] - expected[t]), 1e-9 * std::fabs(expected[t]))
        << what << (weighted ? " weighted" : "") << " transform " << t << ": gpu " << got[t] << " cpu " << expected[t];
    EXPECT_NEAR(got_overlap[t], expected_overlap[t], 1e-12) << what << " transform " << t;
  }
  double single = 0;
  gpu.evaluate(a.matrices.data() + 16, 1, &single);
  EXPECT_EQ(single, got[1]) << what << ": one transform alone differs from the batch";
}

}  // namespace regpipe::test::dense_cost
