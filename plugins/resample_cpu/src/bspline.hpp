// Cubic B-spline interpolation (Unser, "Splines: a perfect fit for signal and image
// processing", IEEE Signal Processing Magazine 16(6), 1999; Thevenaz, Blu & Unser,
// "Interpolation revisited", IEEE TMI 19(7), 2000, section IV). The samples are first turned
// into B-spline coefficients by the recursive filter with pole sqrt(3) - 2 (causal then
// anti-causal pass per axis, mirror boundaries), so the spline passes through every sample.
#pragma once

#include "image_lines.hpp"

#include <functional>
#include <vector>

namespace regpipe::resample {

// The interpolation coefficients of `data`. Double, like ITK's BSplineInterpolateImageFunction:
// the filter's gain (6 per axis) would cost float precision.
std::vector<double> bspline_coefficients(const float* data, const Dims& dims, unsigned threads,
                                         const std::function<bool()>& cancelled);

// The spline at voxel position (x, y, z) (any real position; neighbours beyond the edges mirror).
float bspline_sample(const double* coefficients, const Dims& dims, double x, double y, double z);

}  // namespace regpipe::resample
