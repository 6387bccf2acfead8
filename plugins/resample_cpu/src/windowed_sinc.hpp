// Hann-windowed sinc interpolation, separable: along each axis the taps within `radius` voxels
// weigh sinc(d) * (0.5 + 0.5 cos(pi d / radius)), normalised to sum 1 so constants are
// reproduced exactly (the window alone leaves a ripple of 3e-3 at radius 4). Taps beyond the edges
// read mirrored samples. At an integer position the only tap is the sample itself.
#pragma once

#include "image_lines.hpp"

namespace regpipe::resample {

constexpr int kMaxSincRadius = 16;

float sinc_sample(const float* data, const Dims& dims, int radius, double x, double y, double z);

}  // namespace regpipe::resample
