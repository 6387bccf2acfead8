// ANTs' convergence test (ITK's WindowConvergenceMonitoringFunction, which SyN and every
// ITKv4 optimizer of antsRegistration use): keep the last `window` metric values; once the
// window is full, fit a line to them and report its falling slope at the newest value. The
// level stops when that value drops below the threshold (1e-6 by default): the metric has
// stopped improving, or got worse (a negative value).
//
// The fit, as ITK does it: the values are divided by the sum of |value| over every value
// added since the monitor started (the whole level, not only the window), placed at
// t = n / (window - 1) in [0, 1], and approximated by a linear B-spline with two control
// points c0 (t = 0) and c1 (t = 1) by Lee, Wolberg and Shin's multilevel B-spline
// approximation with one level (BSplineScatteredDataPointSetToImageFilter):
//   c_k = sum_n B_k(t_n)^3 z_n / D_n / sum_n B_k(t_n)^2,  B_0 = 1 - t, B_1 = t,
//   D_n = B_0(t_n)^2 + B_1(t_n)^2,
// and the convergence value is -(c1 - c0). This is not the least-squares line (for values on
// a line it returns a somewhat smaller slope), but it is ANTs' number, so thresholds taken
// from ANTs command lines mean the same here.
#pragma once

#include <cstddef>
#include <deque>

namespace regpipe_common::syn {

class ConvergenceMonitor {
 public:
  explicit ConvergenceMonitor(int window_size);  // throws rp::Error(RP_INVALID_ARGUMENT) below 2

  void add(double metric_value);
  // +infinity until the window is full; 0 when every value so far is 0.
  double convergence_value() const;

 private:
  std::size_t window_;
  std::deque<double> values_;
  double total_energy_ = 0.0;
};

}  // namespace regpipe_common::syn
