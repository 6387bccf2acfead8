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

// The voxel size of the moving image's level for a level of `level_mm`. With `decouple_grids`
// (registration.decouple_grids) it is 1/16 larger than the reference's, so that the two level
// grids never coincide near the identity. Where they do (two images on one scanner grid, or a
// header-only change, as in the known-transform tests), every reference sample lands on a
// moving voxel centre at once and trilinear interpolation stops blurring the moving image at
// that one transform: the cost has a cusp there (Pluim et al. 2000's interpolation artefact),
// a false minimum when the moving image is an exact voxel-wise function of the reference and
// a false maximum when it is noisy. With the grids 1/16 apart they slip one voxel past each
// other every 16, so every sub-voxel offset occurs in every region at every transform, as with
// elastix's random sampling; they coincide again only at a 6% scale on all three axes at once.
double moving_level_mm(double level_mm, bool decouple_grids);

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
