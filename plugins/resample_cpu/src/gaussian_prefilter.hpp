// The anti-aliasing prefilter of a multi-resolution pyramid: a separable Gaussian of standard
// deviation sigma voxels per axis, truncated at 3 sigma and normalised. At the image edges the
// taps falling outside are dropped and the rest renormalised, so a constant stays constant.
#pragma once

#include "image_lines.hpp"

#include <array>
#include <functional>

namespace regpipe::resample {

// Smooths `data` in place; an axis with sigma 0 is left alone.
void gaussian_smooth(float* data, const Dims& dims, const std::array<double, 3>& sigma_voxels,
                     unsigned threads, const std::function<bool()>& cancelled);

}  // namespace regpipe::resample
