// The cubic B-spline coefficients of an image on the CPU, threaded over lines; the filter and
// the sampling are regpipe_common/bspline.hpp's, shared with resample.cuda.
#pragma once

#include "image_lines.hpp"

#include <functional>
#include <vector>

namespace regpipe::resample {

// The interpolation coefficients of `data` (double: the filter's gain of 6 per axis would
// cost float precision).
std::vector<double> bspline_coefficients(const float* data, const Dims& dims, unsigned threads,
                                         const std::function<bool()>& cancelled);

}  // namespace regpipe::resample
