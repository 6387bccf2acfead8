// The multi-resolution pyramid: each level is the image resampled onto an isotropic grid
// of the level's voxel size (FLIRT's scheme), after Gaussian anti-aliasing.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>

namespace regpipe {

// The isotropic grid of `level_mm` voxels with the image's axes, covering its extent.
Image level_grid(const Image& image, double level_mm);

// Anti-aliasing sigma per axis (mm) when going from the image's spacing to level_mm:
// FWHM equal to the level's voxel size, less what the source voxels already blur.
std::array<double, 3> pyramid_sigma_mm(const Image& image, double level_mm);

// The image at one level (smoothed, then trilinear resampling), through the resampler.
Image make_level(const Image& image, double level_mm, ResamplerInstance& resampler);

}  // namespace regpipe
