#include <regpipe_common/syn/convergence_monitor.hpp>

#include <regpipe/plugin.hpp>

#include <cmath>
#include <limits>
#include <string>

namespace regpipe_common::syn {

ConvergenceMonitor::ConvergenceMonitor(int window_size) : window_(std::size_t(window_size < 0 ? 0 : window_size)) {
  // One value has no slope; ITK would divide by window - 1 = 0.
  if (window_size < 2)
    throw rp::Error(RP_INVALID_ARGUMENT, "convergence window size " + std::to_string(window_size) +
                                             " is below the minimum 2");
}

void ConvergenceMonitor::add(double metric_value) {
  values_.push_back(metric_value);
  if (values_.size() > window_) values_.pop_front();
  total_energy_ += std::fabs(metric_value);
}

double ConvergenceMonitor::convergence_value() const {
  if (values_.size() < window_) return std::numeric_limits<double>::infinity();
  if (!(total_energy_ > 0.0)) return 0.0;
  double numerator[2] = {0.0, 0.0}, denominator[2] = {0.0, 0.0};
  for (std::size_t n = 0; n < window_; ++n) {
    const double t = double(n) / double(window_ - 1);
    const double basis[2] = {1.0 - t, t};
    const double z = values_[n] / total_energy_;
    const double squares = basis[0] * basis[0] + basis[1] * basis[1];
    for (int k = 0; k < 2; ++k) {
      numerator[k] += basis[k] * basis[k] * basis[k] * z / squares;
      denominator[k] += basis[k] * basis[k];
    }
  }
  const double c0 = numerator[0] / denominator[0], c1 = numerator[1] / denominator[1];
  return -(c1 - c0);
}

}  // namespace regpipe_common::syn
