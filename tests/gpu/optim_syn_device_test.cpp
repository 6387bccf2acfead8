// optim.syn's `device: cuda` (syn_register_device, its fields on the GPU, cuda.lcc evaluated on
// device memory) against `device: host` (syn_register, cuda.lcc on host memory) through the
// plugin host: the same forward and inverse warps (bit for bit on an H200; held to 1e-5 mm),
// and a cost that takes host memory only refused with a message naming device: host; device:
// auto choosing by the cost; the stage's cost before and after measured on the device as the
// host measures them. Skipped without a CUDA device or cuda.lcc.
#include "support/test_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>
#include <regpipe/host/resample_through_chain.hpp>
#include <regpipe_common/fields/abi_views.hpp>
#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/fields/random_diffeomorphism.hpp>
#include <regpipe_common/fields/warp_image.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
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

struct Result {
  rc::DisplacementField forward, inverse;
  OptimizerInstance::MeasuredCosts costs;
};

// The shift the registrations start from (fixed world -> moving world).
const double kShift[16] = {1, 0, 0, 1.0, 0, 1, 0, -0.5, 0, 0, 1, 0.5, 0, 0, 0, 1};

Image as_image(const rp_image& view) {
  Image image;
  image.dims = {view.dims[0], view.dims[1], view.dims[2]};
  for (int i = 0; i < 16; ++i) image.voxel_to_world(i / 4, i % 4) = view.voxel_to_world[i];
  image.data.assign(view.data, view.data + image.voxel_count());
  return image;
}

class OptimSynDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto why = test::gpu_component_unavailable(host(), RP_KIND_COST, "cuda.lcc")) GTEST_SKIP() << *why;
    if (host().find(RP_KIND_OPTIMIZER, "optim.syn") == nullptr) GTEST_SKIP() << "optim.syn is not built here";
    fixed_values_.resize(rc::voxel_count(grid_.dims));
    std::mt19937 rng(4);
    std::uniform_real_distribution<float> noise(0.0f, 100.0f);
    for (float& v : fixed_values_) v = noise(rng);
    const double sigma[3] = {2.0, 2.0, 2.0};
    rc::smooth_image_gaussian(fixed_values_, grid_.dims, sigma);
    fixed_ = {sizeof(rp_image), {36, 32, 30}, {}, fixed_values_.data()};
    std::copy(grid_.voxel_to_world, grid_.voxel_to_world + 16, fixed_.voxel_to_world);
    rc::RandomDiffeomorphismOptions o;
    o.seed = 21;
    o.max_displacement_mm = 6.0;
    moving_values_ = rc::warp_image(fixed_, rc::view_of(rc::random_smooth_diffeomorphism(grid_, o).displacement), grid_, 0.0f);
    moving_ = fixed_;
    moving_.data = moving_values_.data();
  }

  Result run(const std::string& device, const std::string& cost_id, HostServices& optimizer_services = services()) {
    const Component& oc = host().require(RP_KIND_OPTIMIZER, "optim.syn");
    OptimizerInstance syn(oc, optimizer_services,
                          resolve_params(oc, {{"iterations", "10x5"}, {"shrink_factors", "2x1"},
                                              {"smoothing_sigmas", "1x0"}, {"device", device}}));
    const Component& cc = host().require(RP_KIND_COST, cost_id);
    CostInstance cost(cc, services(), resolve_params(cc, {{"radius", "2"}}));
    Result r{rc::zero_field(grid_), rc::zero_field(grid_), {}};
    rp_field forward = rc::field_view(r.forward), inverse = rc::field_view(r.inverse);
    r.costs = syn.register_deformable(fixed_, moving_, nullptr, kShift, cost, forward, &inverse);
    return r;
  }

  // The cost as register_stages measures it on the host: the moving image resampled on the CPU
  // through `chain` onto the fixed grid, cuda.lcc from host memory.
  double host_cost(const std::vector<ChainStep>& chain) {
    const Image fixed = as_image(fixed_), moving = as_image(moving_);
    const Image warped = resample_at_positions(moving, fixed, chain_sample_positions(chain, fixed, moving),
                                               Interpolation::trilinear);
    const Component& cc = host().require(RP_KIND_COST, "cuda.lcc");
    CostInstance cost(cc, services(), resolve_params(cc, {{"radius", "2"}}));
    double value = std::nan("");
    cost.evaluate_dense(rc::dense_cost_request(grid_, {fixed.data.data(), warped.data.data(), nullptr, &value}));
    return value;
  }

  rc::FieldGeometry grid_{{36, 32, 30}, {3, 0, 0, -52, 0, 3, 0, -46, 0, 0, 3, -43, 0, 0, 0, 1}};
  std::vector<float> fixed_values_, moving_values_;
  rp_image fixed_{}, moving_{};
};

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double largest = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    largest = std::max(largest, std::fabs(double(a[i]) - double(b[i])));
  return largest;
}

TEST_F(OptimSynDevice, CudaEqualsHostWithCudaLcc) {
  const Result on_host = run("host", "cuda.lcc");
  const Result on_device = run("cuda", "cuda.lcc");
  double largest = 0.0;
  for (float v : on_host.forward.vectors) largest = std::max(largest, double(std::fabs(v)));
  EXPECT_GT(largest, 0.5) << "the registration did not move";
  const double forward = max_difference(on_host.forward.vectors, on_device.forward.vectors);
  const double inverse = max_difference(on_host.inverse.vectors, on_device.inverse.vectors);
  std::printf("  optim.syn device: cuda vs host: forward differs by %.3g mm, inverse by %.3g mm (largest %.3g mm)\n",
              forward, inverse, largest);
  EXPECT_LE(forward, 1e-5);
  EXPECT_LE(inverse, 1e-5);
}

// device: auto (the default) follows the cost through abi.h 1.6's cost_device: on cuda.lcc's
// GPU with the same result as device: cuda, on the host with cpu.lcc. optim.syn's summary line
// (info level) says where the fields were.
TEST_F(OptimSynDevice, AutoFollowsTheCostsDevice) {
  HostServices verbose(RP_LOG_INFO);
  testing::internal::CaptureStderr();
  const Result automatic = run("auto", "cuda.lcc", verbose);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("fields on cuda:0 (device: auto)"), std::string::npos) << log;
  EXPECT_LE(max_difference(automatic.forward.vectors, run("cuda", "cuda.lcc").forward.vectors), 0.0);

  if (host().find(RP_KIND_COST, "cpu.lcc") == nullptr) GTEST_SKIP() << "cpu.lcc is not built here";
  testing::internal::CaptureStderr();
  run("auto", "cpu.lcc", verbose);
  log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("fields on the host (device: auto)"), std::string::npos) << log;
}

// abi.h 1.7: on the GPU optim.syn measures the stage's cost before and after (its moving image
// sampled once through the shift, then through shift and warp, on the device) and they are
// the host's figures; the CPU loop leaves them (NaN) to the host.
TEST_F(OptimSynDevice, MeasuresTheCostBeforeAndAfterAsTheHostDoes) {
  const Result on_device = run("cuda", "cuda.lcc");
  Eigen::Matrix4d shift;
  for (int i = 0; i < 16; ++i) shift(i / 4, i % 4) = kShift[i];
  auto forward = std::make_shared<const rc::DisplacementField>(on_device.forward);
  const double before = host_cost({ChainStep{shift, nullptr}});
  const double after = host_cost({ChainStep{shift, nullptr}, ChainStep{Eigen::Matrix4d::Identity(), forward}});
  std::printf("  cost before %.9f (host %.9f), after %.9f (host %.9f)\n", on_device.costs.before, before,
              on_device.costs.after, after);
  EXPECT_LT(after, before - 0.01) << "the registration did not lower the cost";
  EXPECT_NEAR(on_device.costs.before, before, 1e-6);
  EXPECT_NEAR(on_device.costs.after, after, 1e-6);

  const Result on_host = run("host", "cuda.lcc");
  EXPECT_TRUE(std::isnan(on_host.costs.before) && std::isnan(on_host.costs.after));
}

TEST_F(OptimSynDevice, CudaRefusesAHostOnlyCost) {
  if (host().find(RP_KIND_COST, "cpu.lcc") == nullptr) GTEST_SKIP() << "cpu.lcc is not built here";
  try {
    run("cuda", "cpu.lcc");
    ADD_FAILURE() << "device: cuda with cpu.lcc was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("device: host"), std::string::npos) << e.what();
  }
}

}  // namespace
