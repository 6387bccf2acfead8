// syn_register_device (plugins/common_cuda, device_syn.hpp), greedy SyN with its fields on the
// GPU, against the CPU reference syn_register. The device driver is handed the reference's own
// metric (syn::builtin_metric, CC radius 4) through a bridge that copies the two midpoint
// images to the host and the gradient back, so every difference would come from the device
// loop: the field operations, the step scaling, the mask, the order of the steps. Expected
// equal to the last bits (tolerances: 1e-5 mm on the fields, 1e-12 relative on the metric
// values). Skipped without a CUDA device, and when built without CUDA.
#include <gtest/gtest.h>

#ifdef REGPIPE_TESTS_WITH_CUDA

#include <regpipe_common/fields/abi_views.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/fields/random_diffeomorphism.hpp>
#include <regpipe_common/fields/warp_image.hpp>
#include <regpipe_common/syn/syn_registration.hpp>
#include <regpipe_common/syn/syn_update.hpp>
#include <regpipe_common_cuda/device_syn.hpp>

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>
#include <regpipe/plugin.hpp>

#include "cuda_stream_fixture.hpp"
#include "support/test_support.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <vector>

namespace {

using namespace regpipe_common;
namespace cuda = regpipe_common_cuda;

constexpr double kFieldToleranceMm = 1e-5;

// A smooth random image on 34 x 30 x 28 voxels of 3 mm (fixed) and the same warped by a
// random diffeomorphism of 6 mm (moving).
struct Pair {
  FieldGeometry grid{{34, 30, 28}, {3, 0, 0, -50, 0, 3, 0, -45, 0, 0, 3, -40, 0, 0, 0, 1}};
  std::vector<float> fixed_values, moving_values, mask_values;
  rp_image fixed{}, moving{}, mask{};
  Pair() {
    fixed_values.resize(voxel_count(grid.dims));
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> noise(0.0f, 100.0f);
    for (float& v : fixed_values) v = noise(rng);
    const double sigma[3] = {2.0, 2.0, 2.0};
    smooth_image_gaussian(fixed_values, grid.dims, sigma);
    fixed = {sizeof(rp_image), {34, 30, 28}, {}, fixed_values.data()};
    std::copy(grid.voxel_to_world, grid.voxel_to_world + 16, fixed.voxel_to_world);
    RandomDiffeomorphismOptions o;
    o.seed = 9;
    o.max_displacement_mm = 6.0;
    const DisplacementField truth = random_smooth_diffeomorphism(grid, o).displacement;
    moving_values = warp_image(fixed, view_of(truth), grid, 0.0f);
    moving = fixed;
    moving.data = moving_values.data();
    mask_values.assign(fixed_values.size(), 0.0f);
    for (int z = 4; z < 24; ++z)
      for (int y = 4; y < 26; ++y)
        for (int x = 3; x < 30; ++x) mask_values[x + 34 * (y + 30 * std::size_t(z))] = 1.0f;
    mask = fixed;
    mask.data = mask_values.data();
  }
};

syn::SynOptions small_options() {
  syn::SynOptions o;
  o.levels = {{8, 2, 1.0}, {4, 1, 0.0}};
  o.convergence_window_size = 3;
  o.convergence_threshold = 1e-9;
  o.final_inverse_iterations = 30;
  return o;
}

// The reference's metric on device images: copied to the host, evaluated, the gradient copied back.
cuda::DeviceSynMetric bridged(const syn::SynMetricFunction& host_metric) {
  return [host_metric](const FieldGeometry& grid, const float* fixed, const float* moving, const float* mask,
                       float* gradient, cudaStream_t stream) {
    const std::size_t n = voxel_count(grid.dims);
    std::vector<float> f(n), m(n), k(mask ? n : 0), g(3 * n, 0.0f);
    cudaStreamSynchronize(stream);
    cudaMemcpy(f.data(), fixed, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(m.data(), moving, n * sizeof(float), cudaMemcpyDeviceToHost);
    if (mask) cudaMemcpy(k.data(), mask, n * sizeof(float), cudaMemcpyDeviceToHost);
    const double value = host_metric(syn::SynMetricInput{grid, f, m, k}, g);
    cudaMemcpy(gradient, g.data(), g.size() * sizeof(float), cudaMemcpyHostToDevice);
    return value;
  };
}

double max_vector_difference(const DisplacementField& a, const DisplacementField& b) {
  EXPECT_EQ(a.vectors.size(), b.vectors.size());
  double largest = 0.0;
  for (std::size_t i = 0; i + 2 < std::min(a.vectors.size(), b.vectors.size()); i += 3) {
    const double dx = double(a.vectors[i]) - b.vectors[i], dy = double(a.vectors[i + 1]) - b.vectors[i + 1],
                 dz = double(a.vectors[i + 2]) - b.vectors[i + 2];
    largest = std::max(largest, std::sqrt(dx * dx + dy * dy + dz * dz));
  }
  return largest;
}

void expect_same(const syn::SynResult& cpu, const syn::SynResult& gpu, const char* what) {
  ASSERT_EQ(cpu.levels.size(), gpu.levels.size()) << what;
  for (std::size_t l = 0; l < cpu.levels.size(); ++l) {
    const auto &c = cpu.levels[l].metric_values, &g = gpu.levels[l].metric_values;
    ASSERT_EQ(c.size(), g.size()) << what << " level " << l;
    for (std::size_t i = 0; i < c.size(); ++i)
      EXPECT_NEAR(g[i], c[i], 1e-12 * std::fabs(c[i]) + 1e-15) << what << " level " << l << " iteration " << i;
    EXPECT_EQ(cpu.levels[l].converged, gpu.levels[l].converged) << what;
  }
  const double forward = max_vector_difference(cpu.forward, gpu.forward);
  const double inverse = max_vector_difference(cpu.inverse, gpu.inverse);
  std::printf("  %s: metric %.9g -> %.9g; forward differs by %.3g mm, inverse by %.3g mm; inverse residual %.3g mm "
              "(cpu %.3g)\n",
              what, gpu.levels.front().metric_values.front(), gpu.levels.back().metric_values.back(), forward,
              inverse, gpu.inverse_max_residual_mm, cpu.inverse_max_residual_mm);
  EXPECT_LE(forward, kFieldToleranceMm) << what;
  EXPECT_LE(inverse, kFieldToleranceMm) << what;
  EXPECT_LE(max_vector_difference(cpu.mid_from_fixed, gpu.mid_from_fixed), kFieldToleranceMm) << what;
  EXPECT_LE(max_vector_difference(cpu.moving_from_mid, gpu.moving_from_mid), kFieldToleranceMm) << what;
  EXPECT_NEAR(gpu.inverse_max_residual_mm, cpu.inverse_max_residual_mm, 1e-9) << what;
}

using DeviceSyn = regpipe::test::CudaStreamTest;

TEST_F(DeviceSyn, EqualsTheCpuReference) {
  const Pair p;
  const syn::SynOptions o = small_options();
  const syn::SynMetricFunction metric = syn::builtin_metric(o.metric);
  const syn::SynResult cpu = syn::syn_register(p.fixed, p.moving, nullptr, o);
  const syn::SynResult gpu = cuda::syn_register_device(p.fixed, p.moving, nullptr, o, bridged(metric), nullptr, {}, stream_);
  expect_same(cpu, gpu, "plain");
  EXPECT_LT(cpu.levels.back().metric_values.back(), cpu.levels.front().metric_values.front()) << "SyN made no progress";
}

TEST_F(DeviceSyn, EqualsTheCpuReferenceWithMaskAffineAndTotalSmoothing) {
  const Pair p;
  syn::SynOptions o = small_options();
  o.total_field_variance_in_voxel_space = 0.25;  // the blend branch of ANTs' smoothing
  const syn::SynMetricFunction metric = syn::builtin_metric(o.metric);
  const double shift[16] = {1, 0, 0, 1.5, 0, 1, 0, -1.0, 0, 0, 1, 0.5, 0, 0, 0, 1};
  const syn::SynResult cpu = syn::syn_register(p.fixed, p.moving, &p.mask, o, shift);
  const syn::SynResult gpu = cuda::syn_register_device(p.fixed, p.moving, &p.mask, o, bridged(metric), shift, {}, stream_);
  expect_same(cpu, gpu, "mask + affine + total variance");
}

TEST_F(DeviceSyn, ObserverCancelsAndBadOptionsAreRefused) {
  const Pair p;
  syn::SynOptions o = small_options();
  const cuda::DeviceSynMetric metric = bridged(syn::builtin_metric(o.metric));
  const syn::SynObserver stop = [](int, int iteration, double) { return iteration < 2; };
  try {
    cuda::syn_register_device(p.fixed, p.moving, nullptr, o, metric, nullptr, stop, stream_);
    ADD_FAILURE() << "not cancelled";
  } catch (const rp::Error& e) {
    EXPECT_EQ(e.status(), RP_CANCELLED) << e.what();
  }
  o.gradient_step = -1.0;
  EXPECT_THROW(cuda::syn_register_device(p.fixed, p.moving, nullptr, o, metric, nullptr, {}, stream_), rp::Error);
}

// cuda.lcc's RP_EXT_DENSE_COST as optim.syn calls it today (host memory, syn_register) and as
// the device driver does (RP_MEMORY_DEVICE: the images and the gradient never leave the GPU).
struct LccFixture {
  regpipe::PluginHost host{regpipe::test::built_plugins()};
  regpipe::HostServices services;
};

LccFixture& lcc_fixture() {
  static LccFixture f;
  return f;
}

TEST_F(DeviceSyn, WholeIterationsOnTheDeviceWithCudaLcc) {
  if (const auto why = regpipe::test::gpu_component_unavailable(lcc_fixture().host, RP_KIND_COST, "cuda.lcc"))
    GTEST_SKIP() << *why;
  const regpipe::Component& c = lcc_fixture().host.require(RP_KIND_COST, "cuda.lcc");
  const std::map<std::string, std::string> params = {{"radius", "2"}};
  regpipe::CostInstance host_cost(c, lcc_fixture().services, regpipe::resolve_params(c, params));
  regpipe::CostInstance device_cost(c, lcc_fixture().services, regpipe::resolve_params(c, params));
  syn::SynOptions o = small_options();
  long host_calls = 0, device_calls = 0;
  o.metric_function = [&](const syn::SynMetricInput& in, std::span<float> gradient) {
    double value = 0.0;
    host_cost.evaluate_dense(dense_cost_request(
        in.grid, {in.fixed.data(), in.moving.data(), in.mask.empty() ? nullptr : in.mask.data(), &value,
                  gradient.data()}));
    ++host_calls;
    return value;
  };
  const cuda::DeviceSynMetric on_device = [&](const FieldGeometry& grid, const float* fixed, const float* moving,
                                              const float* mask, float* gradient, cudaStream_t) {
    double value = 0.0;
    device_cost.evaluate_dense(
        dense_cost_request(grid, {fixed, moving, mask, &value, gradient}, RP_MEMORY_DEVICE, 0));
    ++device_calls;
    return value;
  };
  const Pair p;
  const syn::SynResult cpu = syn::syn_register(p.fixed, p.moving, &p.mask, o);
  const syn::SynResult gpu = cuda::syn_register_device(p.fixed, p.moving, &p.mask, o, on_device, nullptr, {}, stream_);
  EXPECT_EQ(host_calls, device_calls);
  // cuda.lcc from device memory is its host-memory evaluation (cost_lcc_cuda_test.cpp holds both
  // to cpu.lcc within 1e-5 of the gradient); the fields then follow bit for bit.
  expect_same(cpu, gpu, "cuda.lcc host memory vs device memory");
  EXPECT_LT(gpu.levels.back().metric_values.back(), gpu.levels.front().metric_values.front());
}

}  // namespace

#else

TEST(DeviceSyn, NeedsCuda) { GTEST_SKIP() << "regpipe_gpu_tests was built without CUDA"; }

#endif
