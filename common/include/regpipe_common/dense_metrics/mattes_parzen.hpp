// The per-voxel and per-histogram parts of Mattes MI (mattes_mi.hpp reads them as one
// metric), __host__ __device__ under nvcc so that cuda.mattes bins, weights and finishes the
// histogram with the reference's own arithmetic: the bin mapping, the cubic B-spline Parzen
// window and its derivative, and MI with the derivative's weights from a joint histogram.
#pragma once

#include <regpipe_common/measure_math.hpp>
#include <regpipe_common/voxel_map.hpp>  // RP_HD

#include <math.h>

namespace regpipe_common::dense_metrics {

inline constexpr int kMattesPaddingBins = 2;
inline constexpr int kMinMattesBins = 5;  // at least one bin between the paddings
inline constexpr int kMattesParzenTaps = 4;  // the cubic B-spline's support, in bins

RP_HD double cubic_bspline(double u) {
  const double a = fabs(u);
  if (a < 1.0) return (4.0 - 6.0 * a * a + 3.0 * a * a * a) / 6.0;
  if (a < 2.0) return (2.0 - a) * (2.0 - a) * (2.0 - a) / 6.0;
  return 0.0;
}

RP_HD double cubic_bspline_derivative(double u) {
  const double a = fabs(u);
  if (a < 1.0) return -2.0 * u + 1.5 * u * a;
  if (a < 2.0) return (u < 0.0 ? 0.5 : -0.5) * (2.0 - a) * (2.0 - a);
  return 0.0;
}

// The map of one image's intensities onto continuous bin positions t.
struct MattesBinning {
  double min = 0.0, width = 1.0;
  int bins = 32;
  RP_HD double position(double v) const { return (v - min) / width + kMattesPaddingBins; }
  RP_HD int clamped_bin(double t) const {
    const double last = bins - kMattesPaddingBins - 1;
    return int(floor(fmin(fmax(t, double(kMattesPaddingBins)), last)));
  }
  // The first of the kMattesParzenTaps bins a moving value at t spreads over.
  RP_HD int first_parzen_bin(double t) const { return clamped_bin(t) - 1; }
};

// The binning of an image whose counted voxels span [lo, hi]: bins - 4 equal bins between the
// paddings; a constant image (hi = lo) gets width 1.
RP_HD MattesBinning mattes_binning_of_range(double lo, double hi, int bins) {
  MattesBinning b;
  b.bins = bins;
  b.min = lo;
  const double range = hi - lo;
  b.width = range > 0.0 ? range / (bins - 2 * kMattesPaddingBins) : 1.0;
  return b;
}

// -MI of an unnormalised joint histogram (row = fixed bin), normalising it in place: fills the
// marginals and log_ratio = log(p / p_M) (0 where p = 0), the derivative's weights, and
// *total_out = the histogram's total W. No weight at all gives the worst MI cost, 0.
RP_HD double mattes_cost_from_joint(double* joint, int bins, double* fixed_marginal, double* moving_marginal,
                                    double* log_ratio, double* total_out) {
  const int cells = bins * bins;
  double total = 0.0;
  for (int j = 0; j < cells; ++j) total += joint[j];
  *total_out = total;
  if (!(total > 0.0)) return kWorstMutualInformationCost;
  for (int c = 0; c < bins; ++c) fixed_marginal[c] = moving_marginal[c] = 0.0;
  for (int r = 0; r < bins; ++r) {
    for (int c = 0; c < bins; ++c) {
      joint[r * bins + c] /= total;
      fixed_marginal[r] += joint[r * bins + c];
      moving_marginal[c] += joint[r * bins + c];
    }
  }
  double mi = 0.0;
  for (int r = 0; r < bins; ++r) {
    for (int c = 0; c < bins; ++c) {
      const double p = joint[r * bins + c];
      log_ratio[r * bins + c] = 0.0;
      if (!(p > 0.0)) continue;
      mi += p * log(p / (fixed_marginal[r] * moving_marginal[c]));
      log_ratio[r * bins + c] = log(p / moving_marginal[c]);
    }
  }
  return -mi;
}

// d cost / d m at a voxel of weight w, moving position t and log_ratio row `row` (its fixed
// bin's): w / (W width_m) sum_k beta3'(k - t) log(p(iota, k) / p_M(k)).
RP_HD double mattes_d_cost_d_moving(const double* row, const MattesBinning& moving, double t, double w, double total) {
  const int first = moving.first_parzen_bin(t);
  double sum = 0.0;
  for (int k = first; k < first + kMattesParzenTaps; ++k) sum += cubic_bspline_derivative(k - t) * row[k];
  return w / (total * moving.width) * sum;
}

}  // namespace regpipe_common::dense_metrics
