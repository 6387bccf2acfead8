// The three measures of this plugin as DeviceMetrics (dense_problem.hpp), each the formula of
// its CPU twin's regpipe_common/dense_metrics/ header in double on the device.
#pragma once

#include "dense_problem.hpp"
#include "lcc_kernels.hpp"

#include <memory>

namespace regpipe::cost_dense_cuda {

// cuda.lcc: ANTs' neighbourhood CC, box window of `radius` (local_cc.hpp; lcc_kernels.cu).
std::unique_ptr<DeviceMetric> make_local_cc_metric(int radius, bool exact, WindowScheme scheme);

// cuda.ls: ANTs' MeanSquares (mean_squares.hpp; mean_squares_metric.cu).
std::unique_ptr<DeviceMetric> make_mean_squares_metric();

// cuda.mattes: ANTs' Mattes MI with `bins` Parzen bins (mattes_mi.hpp; mattes_metric.cu).
std::unique_ptr<DeviceMetric> make_mattes_metric(int bins);

}  // namespace regpipe::cost_dense_cuda
