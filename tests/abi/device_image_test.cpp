// RP_EXT_DEVICE_IMAGE (abi.h 1.3) on the host's side: when the driver hands pyramid levels
// over in device memory and when it keeps the host path, with fake components whose "device
// memory" is host memory (tests/abi/fake_device_image.c), so this runs without a GPU.
#include <regpipe/host/components.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/plugin_host.hpp>

#include "support/test_support.hpp"

#include <algorithm>

namespace fs = std::filesystem;
using namespace regpipe;

namespace {

class DeviceImages : public ::testing::Test {
 protected:
  DeviceImages() : plugins_(search()), services_(RP_LOG_WARNING, false) {
    images_.reference = make_head_phantom({40, 44, 36}, 2.0, 0);
    images_.moving = make_head_phantom({36, 40, 32}, 2.2, 1);
  }

  static PluginSearchOptions search() {
    return test::plugins_in(
        {(test::bin_dir() / ".." / "test_plugins" / "device_image").lexically_normal(), test::plugin_dir()});
  }

  static Pipeline pipeline(const std::string& cost, const std::string& resampler,
                           const std::map<std::string, std::string>& cost_params = {}) {
    Pipeline p;
    p.registration.dof = 6;
    p.registration.levels_mm = {8, 4};
    p.registration.cost.plugins = {cost};
    for (const auto& [k, v] : cost_params) p.registration.cost.params[k] = {v, {}};
    p.registration.optimizer.plugins = {"optim.powell"};
    p.registration.resampler.plugins = {resampler};
    return p;
  }

  struct Run {
    RegistrationResult result;
    TransferCounts resampler, cost;
  };
  Run run(const Pipeline& p) {
    RegistrationComponents c = create_registration_components(p, plugins_, services_);
    Run r;
    r.result = register_images(p, images_, c, services_);
    r.resampler = c.resampler->transfer_counts();
    r.cost = c.cost->transfer_counts();
    return r;
  }

  PluginHost plugins_;
  HostServices services_;
  RegistrationImages images_;
};

TEST_F(DeviceImages, HostFindsTheExtensionWhereOffered) {
  RegistrationComponents fake = create_registration_components(
      pipeline("test.device_cost", "test.device_resampler", {{"device", "3"}}), plugins_, services_);
  ASSERT_NE(fake.resampler->device_images(), nullptr);
  ASSERT_NE(fake.cost->device_images(), nullptr);
  EXPECT_EQ(fake.resampler->device(), 0);
  EXPECT_EQ(fake.cost->device(), 3);
  RegistrationComponents cpu = create_registration_components(pipeline("cpu.cr", "resample.cpu"), plugins_, services_);
  EXPECT_EQ(cpu.resampler->device_images(), nullptr);
  EXPECT_EQ(cpu.cost->device_images(), nullptr);
  EXPECT_EQ(cpu.cost->device(), -1);
  EXPECT_EQ(cpu.resampler->transfer_counts().downloads, 0u);
}

// RP_EXT_DEVICE_INFO (abi.h 1.4): the device a component describes reaches the run's
// components and its printed line; a CPU component describes none.
TEST_F(DeviceImages, TheDeviceAComponentDescribesIsReported) {
  RegistrationComponents fake = create_registration_components(
      pipeline("test.device_cost", "test.device_resampler", {{"device", "3"}}), plugins_, services_);
  const std::optional<DeviceDescription> device = fake.cost->device_description();
  ASSERT_TRUE(device.has_value());
  EXPECT_EQ(device->device, 3);
  EXPECT_EQ(device->name, "Fake GPU 3");
  EXPECT_EQ(device->compute_major, 9);
  EXPECT_EQ(device->memory_bytes, uint64_t(80) << 30);
  EXPECT_FALSE(fake.resampler->device_description().has_value());  // offers device images only
  const auto cost = std::find_if(fake.used.begin(), fake.used.end(), [](const UsedComponent& u) { return u.role == "cost"; });
  ASSERT_NE(cost, fake.used.end());
  ASSERT_TRUE(cost->device.has_value());
  EXPECT_NE(describe_used(*cost).find("test.device_cost 1.0.0 on Fake GPU 3 (device 3)"), std::string::npos)
      << describe_used(*cost);
  RegistrationComponents cpu = create_registration_components(pipeline("cpu.cr", "resample.cpu"), plugins_, services_);
  EXPECT_FALSE(cpu.cost->device_description().has_value());
  EXPECT_FALSE(cpu.optimizer->device_description().has_value());
}

// Both images uploaded once, no level downloaded nor handed over in host memory; the same
// costs and transform as the host path, which the device mismatch below forces.
TEST_F(DeviceImages, LevelsStayOnTheDeviceWhenBothOfferItOnOneDevice) {
  const Run device = run(pipeline("test.device_cost", "test.device_resampler"));
  EXPECT_EQ(device.resampler.uploads, 2u);
  EXPECT_EQ(device.resampler.downloads, 0u);
  EXPECT_EQ(device.cost.uploads, 0u);

  const Run host = run(pipeline("test.device_cost", "test.device_resampler", {{"device", "1"}}));
  EXPECT_EQ(host.resampler.downloads, 4u);  // 2 images x 2 levels
  EXPECT_EQ(host.cost.uploads, 4u);
  EXPECT_EQ(host.result.ref_to_mov, device.result.ref_to_mov);
  EXPECT_EQ(host.result.final_cost, device.result.final_cost);
  EXPECT_EQ(host.result.evaluations, device.result.evaluations);
}

TEST_F(DeviceImages, CostTakingTheReferenceFromHostMemoryGetsItThere) {
  const Run r = run(pipeline("test.device_cost", "test.device_resampler", {{"reference_on_device", "false"}}));
  EXPECT_EQ(r.resampler.downloads, 2u);  // the reference's 2 levels
  EXPECT_EQ(r.cost.uploads, 2u);
  EXPECT_EQ(r.resampler.uploads, 2u);
}

TEST_F(DeviceImages, MixesWithComponentsWithoutTheExtensionKeepTheHostPath) {
  const Run cpu_cost = run(pipeline("cpu.cr", "test.device_resampler"));
  EXPECT_EQ(cpu_cost.resampler.downloads, 4u);
  const Run cpu_resampler = run(pipeline("test.device_cost", "resample.cpu"));
  EXPECT_EQ(cpu_resampler.cost.uploads, 4u);
}

// The extension hands over unweighted images: the weighted one goes through host memory.
TEST_F(DeviceImages, AnImageWithAWeightingImageKeepsTheHostPath) {
  Image weight = images_.moving;
  for (float& w : weight.data) w = 1.0f;
  images_.moving_weight = weight;
  const Run r = run(pipeline("test.device_cost", "test.device_resampler"));
  EXPECT_EQ(r.cost.uploads, 2u);          // the moving image's 2 levels
  EXPECT_EQ(r.resampler.downloads, 4u);   // and its weight's
}

}  // namespace
