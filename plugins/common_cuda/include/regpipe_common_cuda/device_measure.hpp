// What regpipe_common::measure_image_in_place finds of an unweighted image, for an image in
// device memory (RP_EXT_DEVICE_IMAGE): its range and first non-finite voxel scanned on the
// device, the header checks and messages on the host. Min and max are exact in any order, so
// the range is measure_image_in_place's bit for bit (but for the sign of a zero extreme, which
// no bin, range or cost depends on); the total weight is the voxel count as there.
#pragma once

#include "regpipe_common_cuda/device_buffer.hpp"

#include <regpipe/abi.h>
#include <regpipe_common/prepared_image.hpp>

#include <cuda_runtime.h>

#include <string>

namespace regpipe_common_cuda {

// Throws as measure_image_in_place does (RP_INVALID_ARGUMENT naming `role`). The result's
// values are the device's (never read on the host); min_all/max_all are the range. Runs on
// `stream` and synchronises it; `scratch` is reused between calls.
regpipe_common::MeasuredImage measure_device_image(const rp_device_image& image, const std::string& role,
                                                   cudaStream_t stream, DeviceBuffer<unsigned long long>& scratch);

}  // namespace regpipe_common_cuda
