// RP_EXT_DEVICE_IMAGE (abi.h 1.3) between resample.cuda and the CUDA costs: levels handed over
// in device memory give the costs of the host path bit for bit, and a registration uploads
// each image once. Skipped without a CUDA device.
#include <regpipe/host/components.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/plugin_host.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform.hpp>

#include "support/test_support.hpp"

#include <random>

using namespace regpipe;

namespace {

struct CostCase {
  const char* name;
  const char* id;
  std::map<std::string, std::string> params;
  // Image data the cost copies between host and device when both levels come from device
  // memory: cuda.cr's moving mean may need a host copy (1 download, tested apart below), its
  // schemes 1-5 build their reference on the host (1 download of the level, 1 upload of its
  // bins); cuda.mi's presorted state downloads the reference's bins.
  uint64_t uploads, downloads_min, downloads_max;
};

const CostCase kCases[] = {
    {"cr_fused", "cuda.cr", {{"bins", "256"}}, 0, 0, 1},
    {"cr_scheme5", "cuda.cr", {{"bins", "64"}, {"scheme", "scheme5"}}, 1, 1, 2},
    // head_weight_mm derives the weights on the host: each level downloaded once, then uploaded
    // with its weights (the reference's spans once, the moving values and weights).
    {"cr_head_weight", "cuda.cr", {{"bins", "256"}, {"head_weight_mm", "2"}}, 3, 2, 2},
    {"mi_privatised", "cuda.mi", {{"bins", "64"}}, 0, 0, 0},
    {"mi_presorted", "cuda.mi", {{"bins", "64"}, {"scheme", "presorted"}}, 0, 1, 1},
    {"nmi_partial_volume", "cuda.nmi", {{"bins", "64"}, {"partial_volume", "true"}}, 0, 0, 0},
};

class DeviceImagesCuda : public ::testing::TestWithParam<CostCase> {
 public:
 protected:
  DeviceImagesCuda() : plugins_(test::built_plugins()), services_(RP_LOG_WARNING, false) {
    images_.reference = make_head_phantom({96, 104, 84}, 1.5, 0);
    images_.moving = make_head_phantom({88, 96, 80}, 1.6, 1);
  }
  void SetUp() override {
    for (const std::string id : {std::string(GetParam().id), std::string("resample.cuda")})
      if (const auto why = test::gpu_component_unavailable(plugins_, id == "resample.cuda" ? RP_KIND_RESAMPLER : RP_KIND_COST, id))
        GTEST_SKIP() << *why;
  }
  Pipeline pipeline(const std::string& resampler) const {
    Pipeline p;
    p.registration.dof = 12;
    p.registration.levels_mm = {8, 4, 2};
    p.registration.cost.plugins = {GetParam().id};
    for (const auto& [k, v] : GetParam().params) p.registration.cost.params[k] = {v, {}};
    p.registration.optimizer.plugins = {"optim.powell"};
    p.registration.resampler.plugins = {resampler};
    return p;
  }

  PluginHost plugins_;
  HostServices services_;
  RegistrationImages images_;
};

// Random transforms about the identity: a few degrees and millimetres, some without overlap.
std::vector<double> transforms(size_t k) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> angle(-0.1, 0.1), shift(-6.0, 6.0);
  std::vector<double> out;
  for (size_t i = 0; i < k; ++i) {
    AffineParams p = identity_params();
    for (int j = 0; j < 3; ++j) p[j] = angle(rng);
    for (int j = 3; j < 6; ++j) p[j] = shift(rng) * (i % 16 == 15 ? 100.0 : 1.0);
    const Eigen::Matrix4d m = params_to_matrix(p, Eigen::Vector3d::Zero());
    for (int j = 0; j < 16; ++j) out.push_back(m(j / 4, j % 4));
  }
  return out;
}

TEST_P(DeviceImagesCuda, LevelsFromDeviceMemoryGiveTheHostPathsCostsBitForBit) {
  RegistrationComponents c = create_registration_components(pipeline("resample.cuda"), plugins_, services_);
  ASSERT_NE(c.resampler->device_images(), nullptr);
  ASSERT_NE(c.cost->device_images(), nullptr);
  const Component& component = plugins_.require(RP_KIND_COST, GetParam().id);
  CostInstance host_cost(component, services_, resolve_params(component, GetParam().params));
  const std::vector<double> matrices = transforms(64);
  for (double mm : {4.0, 2.0}) {
    const uint64_t ref_id = new_input_id(), mov_id = new_input_id();
    const Image ref = make_level(images_.reference, mm, *c.resampler, ref_id);
    const Image mov = make_level(images_.moving, mm, *c.resampler, mov_id);
    const Level ref_device = make_device_level(images_.reference, mm, *c.resampler, ref_id);
    const Level mov_device = make_device_level(images_.moving, mm, *c.resampler, mov_id);
    host_cost.set_reference(ref, nullptr);
    host_cost.set_moving(mov, nullptr);
    const TransferCounts before = c.cost->transfer_counts();
    if (c.cost->device_images()->set_reference_device != nullptr)
      c.cost->set_reference(*ref_device.device);
    else
      c.cost->set_reference(ref, nullptr);
    c.cost->set_moving(*mov_device.device);
    const TransferCounts after = c.cost->transfer_counts();
    EXPECT_EQ(after.uploads - before.uploads, GetParam().uploads);
    EXPECT_GE(after.downloads - before.downloads, GetParam().downloads_min);
    EXPECT_LE(after.downloads - before.downloads, GetParam().downloads_max);
    const size_t k = matrices.size() / 16;
    std::vector<double> host_costs(k), device_costs(k), host_overlaps(k), device_overlaps(k);
    host_cost.evaluate(matrices.data(), k, host_costs.data(), host_overlaps.data());
    c.cost->evaluate(matrices.data(), k, device_costs.data(), device_overlaps.data());
    for (size_t t = 0; t < k; ++t) {
      EXPECT_EQ(device_costs[t], host_costs[t]) << mm << " mm, transform " << t;
      EXPECT_EQ(device_overlaps[t], host_overlaps[t]) << mm << " mm, transform " << t;
    }
  }
}

// The whole driver: resample.cuda + the cost take the device path (each image uploaded once,
// no level downloaded by the resampler); resample.cpu, whose levels are resample.cuda's bit for bit,
// takes the host path: the same transform, cost and evaluation count.
TEST_P(DeviceImagesCuda, RegistrationUploadsEachImageOnceAndMatchesTheHostPath) {
  RegistrationComponents gpu = create_registration_components(pipeline("resample.cuda"), plugins_, services_);
  const RegistrationResult device = register_images(pipeline("resample.cuda"), images_, gpu, services_);
  const TransferCounts resampler = gpu.resampler->transfer_counts();
  EXPECT_EQ(resampler.uploads, 2u);
  EXPECT_EQ(resampler.downloads, 0u);  // no level of either image goes back to host memory
  const RegistrationResult host = register_images(pipeline("resample.cpu"), images_, plugins_, services_);
  EXPECT_EQ(device.ref_to_mov, host.ref_to_mov);
  EXPECT_EQ(device.final_cost, host.final_cost);
  EXPECT_EQ(device.evaluations, host.evaluations);
}

// RP_EXT_DEVICE_INFO (abi.h 1.4): the cost and the resampler name the card they ran on, as
// the CUDA runtime names it, so that a report says which device gave its numbers.
TEST_P(DeviceImagesCuda, CostAndResamplerDescribeTheirDevice) {
  RegistrationComponents gpu = create_registration_components(pipeline("resample.cuda"), plugins_, services_);
  for (const UsedComponent& used : gpu.used) {
    if (used.role == "optimizer") continue;
    ASSERT_TRUE(used.device.has_value()) << used.id;
    EXPECT_EQ(used.device->device, 0) << used.id;
    EXPECT_NE(used.device->name.find("NVIDIA"), std::string::npos) << used.device->name;
    EXPECT_GE(used.device->compute_major, 9) << used.id;  // built for sm_90
    EXPECT_GT(used.device->memory_bytes, uint64_t(1) << 30) << used.id;
    EXPECT_GE(used.device->driver_version, used.device->runtime_version) << used.id;
  }
}

// cuda.cr's moving mean from device memory: settled from the device's sum when its error
// bound leaves one float (no copy back), from a host copy when the bound straddles two (here a
// mean of exactly 1 + 2^-24, halfway between two floats); the host path's costs either way.
TEST(DeviceImagesCudaCr, MovingMeanFromTheDeviceSumOrAHostCopyGivesTheHostPathsBits) {
  PluginHost plugins(test::built_plugins());
  HostServices services(RP_LOG_WARNING, false);
  for (const char* id : {"cuda.cr", "resample.cuda"})
    if (const auto why = test::gpu_component_unavailable(plugins, id[0] == 'r' ? RP_KIND_RESAMPLER : RP_KIND_COST, id))
      GTEST_SKIP() << *why;
  const Component& resampler_component = plugins.require(RP_KIND_RESAMPLER, "resample.cuda");
  ResamplerInstance resampler(resampler_component, services, resolve_params(resampler_component, {}));
  const Component& cost_component = plugins.require(RP_KIND_COST, "cuda.cr");
  const std::vector<double> matrices = transforms(32);
  // 64^3 voxels of 1 and one brighter: the mean is 1 + extra / 2^18, exactly (a serial sum of
  // these is exact).
  for (const auto& [extra, downloads] : {std::pair{0.5f, 0u}, std::pair{0.015625f, 1u}}) {
    Image image;
    image.dims = {64, 64, 64};
    image.data.assign(image.voxel_count(), 1.0f);
    image.data[12345] += extra;
    // The image itself on the device: resampled onto its own grid (trilinear at the voxel
    // centres returns the voxels).
    const rp_image input = image.view();
    rp_resample_request req{};
    req.size = sizeof(req);
    req.input = &input;
    for (int a = 0; a < 3; ++a) req.out_dims[a] = image.dims[a];
    for (int i = 0; i < 16; ++i) req.out_voxel_to_world[i] = image.voxel_to_world(i / 4, i % 4);
    req.interpolation = RP_INTERP_TRILINEAR;
    const DeviceImage device = resampler.resample_to_device(req);
    CostInstance host_cost(cost_component, services, resolve_params(cost_component, {}));
    CostInstance device_cost(cost_component, services, resolve_params(cost_component, {}));
    host_cost.set_reference(image, nullptr);
    host_cost.set_moving(image, nullptr);
    device_cost.set_reference(image, nullptr);
    device_cost.set_moving(*device);
    EXPECT_EQ(device_cost.transfer_counts().downloads, downloads) << "extra " << extra;
    const size_t k = matrices.size() / 16;
    std::vector<double> host_costs(k), device_costs(k);
    host_cost.evaluate(matrices.data(), k, host_costs.data());
    device_cost.evaluate(matrices.data(), k, device_costs.data());
    for (size_t t = 0; t < k; ++t) EXPECT_EQ(device_costs[t], host_costs[t]) << "extra " << extra << ", transform " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Costs, DeviceImagesCuda, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<CostCase>& i) { return std::string(i.param.name); });

}  // namespace
