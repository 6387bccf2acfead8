// Known-transform registration cases on ../shared/data, run in-process through the real
// plugins. Truth comes from moving a copy's header by a known world transform (no
// resampling), so the right answer is exactly that change.
#pragma once

#include <regpipe/host/driver.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/transform.hpp>

#include "support/test_support.hpp"

#include <cmath>
#include <cstdio>

namespace regpipe::test {

class RegistrationTest : public ::testing::Test {
 protected:
  RegistrationTest() : plugins_(built_plugins()), services_(RP_LOG_WARNING, false) {}

  // The pipeline of these tests: the FLIRT schedule, one cost, Powell.
  static Pipeline pipeline(const std::string& cost, const std::map<std::string, std::string>& params,
                           unsigned dof = 12) {
    Pipeline p;
    p.registration.dof = dof;
    p.registration.levels_mm = {8, 4, 2, 1};
    p.registration.cost.plugins = {cost};
    for (const auto& [k, v] : params) p.registration.cost.params[k] = {v, {}};
    p.registration.optimizer.plugins = {"optim.powell"};
    p.registration.resampler.plugins = {"resample.cpu"};
    return p;
  }

  // `flirt -dof 12` with one cost: FLIRT's default search, 8/4/2 mm (the 1 mm level left out
  // to keep CPU tests on real images fast).
  static Pipeline flirt_to_2mm(const std::string& cost, const std::map<std::string, std::string>& params) {
    Pipeline p = pipeline(cost, params);
    p.registration.levels_mm = {8, 4, 2};
    p.registration.optimizer.plugins = {"optim.flirt"};
    return p;
  }

  RegistrationResult run(const Pipeline& p, const Image& reference, const Image& moving) {
    RegistrationImages images;
    images.reference = reference;
    images.moving = moving;
    return register_images(p, images, plugins_, services_);
  }

  // Mean displacement (mm) over the reference head between two reference->moving transforms.
  static double error_mm(const Eigen::Matrix4d& found, const Eigen::Matrix4d& truth, const Image& reference) {
    return mean_displacement_mm(found, truth, reference, foreground_threshold(reference));
  }

  // 10 degrees about an oblique axis through the image centre and 10 mm along another.
  static Eigen::Matrix4d header_change(const Image& image) {
    const Eigen::Vector3d centre = centre_of_mass(image);
    return rigid_about(Eigen::Vector3d(1, 1, 0.5).normalized(), 10.0 * M_PI / 180.0, centre,
                       Eigen::Vector3d(6, -7, 4.5));  // |t| = 10.3 mm
  }

  PluginHost plugins_;
  HostServices services_;
};

}  // namespace regpipe::test
