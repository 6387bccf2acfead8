#include "driver/device_path.hpp"

namespace regpipe {

DevicePath choose_device_path(const RegistrationComponents& components) {
  if (!components.resampler || components.resampler->device_images() == nullptr) return {};
  const int32_t device = components.resampler->device();
  std::vector<const CostInstance*> costs;
  for (const auto& c : components.level_costs) costs.push_back(c.get());
  if (costs.empty() && components.cost) costs.push_back(components.cost.get());
  if (costs.empty()) return {};
  DevicePath path{true, true};
  for (const CostInstance* cost : costs) {
    const rp_cost_device_image_ext* ext = cost->device_images();
    // On another device the resampler's pointers are not the cost's to read.
    if (ext == nullptr || cost->device() != device) return {};
    path.reference = path.reference && ext->set_reference_device != nullptr;
    path.moving = path.moving && ext->set_moving_device != nullptr;
  }
  return path;
}

}  // namespace regpipe
