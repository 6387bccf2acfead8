// The multi-resolution pyramid: each level is the image resampled onto an isotropic grid
// of the level's voxel size (FLIRT's scheme), after Gaussian anti-aliasing.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>

namespace regpipe {

// The isotropic grid of `level_mm` voxels with the image's axes, covering its extent.
Image level_grid(const Image& image, double level_mm);
// The same grid without voxels (data empty).
Image level_geometry(const Image& image, double level_mm);

// Anti-aliasing sigma per axis (mm) when going from the image's spacing to level_mm:
// FWHM equal to the level's voxel size, less what the source voxels already blur.
std::array<double, 3> pyramid_sigma_mm(const Image& image, double level_mm);

// The image at one level (smoothed, then trilinear resampling), through the resampler.
// `input_id` (from new_input_id(), or 0) names the image to the resampler: pass the same id
// for every level of one unchanged image, so a GPU resampler uploads it once.
Image make_level(const Image& image, double level_mm, ResamplerInstance& resampler, uint64_t input_id = 0);

// A level made in device memory by a resampler offering RP_EXT_DEVICE_IMAGE (abi.h 1.3):
// `image` is its grid without voxels, `device` the voxels (the same values make_level would
// give, for a resampler that keeps its promise).
struct Level {
  Image image;
  DeviceImage device;
};
Level make_device_level(const Image& image, double level_mm, ResamplerInstance& resampler, uint64_t input_id);

// A process-wide unique, nonzero rp_resample_request.input_id.
uint64_t new_input_id();

}  // namespace regpipe
