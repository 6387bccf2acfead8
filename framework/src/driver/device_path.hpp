// Whether a registration's pyramid levels go to the cost in device memory (RP_EXT_DEVICE_IMAGE,
// abi.h 1.3) instead of through host memory: only when the resampler and every cost the
// levels use offer the extension on one device. Decided per image, since a cost may take one
// of them from host memory only (its set_reference_device NULL), and an image with a weighting image
// keeps the host path (the extension hands over unweighted images: the caller checks that).
// Anything else (CPU components, third-party plugins, a mix, two devices) keeps the host path.
#pragma once

#include <regpipe/host/driver.hpp>

namespace regpipe {

struct DevicePath {
  bool reference = false, moving = false;
};

DevicePath choose_device_path(const RegistrationComponents& components);

}  // namespace regpipe
