// What regpipe_common::measure_image_in_place finds of an unweighted image, for an image in
// device memory (RP_EXT_DEVICE_IMAGE): its range and first non-finite voxel scanned on the
// device with its sums, the header checks and messages on the host. Min and max are exact in any order, so
// the range is measure_image_in_place's bit for bit (but for the sign of a zero extreme, which
// no bin, range or cost depends on); the total weight is the voxel count as there.
#pragma once

#include "regpipe_common_cuda/device_buffer.hpp"

#include <regpipe/abi.h>
#include <regpipe_common/prepared_image.hpp>

#include <cuda_runtime.h>

#include <string>

namespace regpipe_common_cuda {

struct MeasureScratch {
  DeviceBuffer<unsigned long long> found;  // min key, max key, first non-finite voxel
  DeviceBuffer<double> partials;           // per block: sum and sum of absolute values
};

struct DeviceMeasurement {
  regpipe_common::MeasuredImage image;
  // The voxels' sum and sum of absolute values in double, in the device's order (repeatable on
  // one device): not the serial sum's bits, but within any summation order's error bound of it
  // (regpipe_common::serial_mean_bounds).
  double sum = 0.0, abs_sum = 0.0;
};

// Throws RP_INVALID_ARGUMENT naming `role` when `image` lives on another device than `device`
// (the instance's): its pointer is not this instance's to read.
void require_on_device(const rp_device_image& image, int device, const std::string& role);

// Throws as measure_image_in_place does (RP_INVALID_ARGUMENT naming `role`). The image's
// values are the device's (never read on the host); min_all/max_all are the range. Runs on
// `stream` and synchronises it; `scratch` is reused between calls.
DeviceMeasurement measure_device_image(const rp_device_image& image, const std::string& role, cudaStream_t stream,
                                       MeasureScratch& scratch);

// Loads measure_device_image's kernel now rather than at its first call (kernel_loading.hpp).
void load_measure_kernels();

}  // namespace regpipe_common_cuda
