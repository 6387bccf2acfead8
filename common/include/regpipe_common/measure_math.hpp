// The similarity measures as functions of their accumulated sums: pure double arithmetic,
// header-only so the tests can check the formulas directly. Every function returns a finite
// cost; degenerate input (no overlap, zero variance, empty histogram) gives the measure's
// worst value (abi.h), never NaN.
#pragma once

#include <regpipe_common/voxel_map.hpp>  // RP_HD: the CR formula also runs on the GPU (cuda.cr)

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace regpipe_common {

// Worst finite costs (abi.h: returned when there is no overlap).
inline constexpr double kWorstCorrelationRatioCost = 1.0;   // 1 - eta, eta = 0
inline constexpr double kWorstMutualInformationCost = 0.0;  // -MI, MI = 0
inline constexpr double kWorstNormalisedMiCost = -1.0;      // -NMI, NMI = 1
// 1 - NCC for NCC = -1. Not 1 (NCC = 0): an anti-correlated overlap would then cost more
// than no overlap at all, and a searcher could improve by sliding the images apart.
inline constexpr double kWorstNccCost = 2.0;
inline constexpr double kWorstLeastSquaresCost = 1e30;  // LS is unbounded above

// A spread below this fraction of the second moment is float rounding of equal values, not
// variance: summing w*y and w*y*y of a constant leaves ~1e-16 relative residue.
inline constexpr double kNegligibleSpread = 1e-12;

// Sum of squared deviations from the weighted mean, sum w (y - mean)^2 = ss - s^2 / w, from
// the moments w = sum w, s = sum w y, ss = sum w y^2. Clamped at 0 against rounding.
RP_HD double squared_deviation(double w, double s, double ss) {
  if (!(w > 0.0)) return 0.0;
  const double d = ss - s * s / w;
  return d > 0.0 ? d : 0.0;
}

// True when `deviation` (from squared_deviation) is rounding noise relative to `ss`.
RP_HD bool negligible_spread(double deviation, double ss) {
  return !(deviation > kNegligibleSpread * ss);
}

// Layout of the correlation-ratio sums: per reference bin b, {w, sum w y, sum w y^2} at 3b.
inline constexpr std::size_t kCorrelationRatioSumsPerBin = 3;

// 1 - eta(Y|X) (Roche et al. 1998; Li & Kumar 2014 eq. 2): sum_i N_i var_i / (N var) with X
// the binned reference and Y the moving samples, written as within-bin over total squared
// deviation. Worst (1) without overlap or when Y is constant over the overlap.
// The final step from the moments summed over bins (w, s, ss) and the within-bin squared
// deviation summed over bins; cuda.cr sums those on the GPU in its own order.
RP_HD double correlation_ratio_from_moments(double w, double s, double ss, double within) {
  const double total = squared_deviation(w, s, ss);
  if (negligible_spread(total, ss)) return kWorstCorrelationRatioCost;
  const double ratio = within / total;
  return ratio < kWorstCorrelationRatioCost ? ratio : kWorstCorrelationRatioCost;
}

// `stride`: doubles from one bin's sums to the next's (cpu.cr pads each bin to four).
inline double correlation_ratio_cost(const double* bin_sums, std::size_t bins,
                                     std::size_t stride = kCorrelationRatioSumsPerBin) {
  double w = 0.0, s = 0.0, ss = 0.0, within = 0.0;
  for (std::size_t b = 0; b < bins; ++b) {
    const double* m = bin_sums + stride * b;
    w += m[0];
    s += m[1];
    ss += m[2];
    within += squared_deviation(m[0], m[1], m[2]);
  }
  return correlation_ratio_from_moments(w, s, ss, within);
}

// Shannon entropies in nats of a weighted joint histogram (row = reference bin, column =
// moving bin) and of its two marginals.
struct HistogramEntropies {
  double reference = 0.0;
  double moving = 0.0;
  double joint = 0.0;
  double total_weight = 0.0;
};

// sum over h > 0 of h log h.
RP_HD double h_log_h(double h) { return h > 0.0 ? h * std::log(h) : 0.0; }

namespace detail {
// H = -sum p log p with p = h / W, written as log W - (sum h log h) / W.
RP_HD double entropy(double sum_h_log_h, double w) { return std::log(w) - sum_h_log_h / w; }
}  // namespace detail

// The entropies from the sums of h log h over the joint bins, the row totals and the column
// totals, and the total weight; cuda.mi sums those on the GPU in its own order.
RP_HD HistogramEntropies entropies_from_sums(double joint_hlogh, double ref_hlogh, double mov_hlogh,
                                             double total_weight) {
  HistogramEntropies e;
  e.total_weight = total_weight;
  if (!(total_weight > 0.0)) return e;
  e.reference = detail::entropy(ref_hlogh, total_weight);
  e.moving = detail::entropy(mov_hlogh, total_weight);
  e.joint = detail::entropy(joint_hlogh, total_weight);
  return e;
}

inline HistogramEntropies histogram_entropies(const double* joint, std::size_t ref_bins,
                                              std::size_t mov_bins) {
  double total_weight = 0.0, joint_hlogh = 0.0, ref_hlogh = 0.0, mov_hlogh = 0.0;
  for (std::size_t r = 0; r < ref_bins; ++r) {
    double row = 0.0;
    for (std::size_t m = 0; m < mov_bins; ++m) {
      row += joint[r * mov_bins + m];
      joint_hlogh += h_log_h(joint[r * mov_bins + m]);
    }
    total_weight += row;
    ref_hlogh += h_log_h(row);
  }
  for (std::size_t m = 0; m < mov_bins; ++m) {
    double column = 0.0;
    for (std::size_t r = 0; r < ref_bins; ++r) column += joint[r * mov_bins + m];
    mov_hlogh += h_log_h(column);
  }
  return entropies_from_sums(joint_hlogh, ref_hlogh, mov_hlogh, total_weight);
}

// -MI = -(H(R) + H(M) - H(R,M)). MI >= 0, so rounding below 0 is clamped to the worst, 0.
RP_HD double mutual_information_cost(const HistogramEntropies& e) {
  return -std::max(0.0, e.reference + e.moving - e.joint);
}

// A joint entropy below this (nats) is one occupied bin up to rounding: NMI is 0/0 there.
inline constexpr double kNegligibleEntropy = 1e-12;

// -NMI, NMI = (H(R) + H(M)) / H(R,M) (Studholme et al. 1999), in [1, 2]. Worst (-1) without
// overlap or when all weight falls in one joint bin.
RP_HD double normalised_mi_cost(const HistogramEntropies& e) {
  if (!(e.joint > kNegligibleEntropy)) return kWorstNormalisedMiCost;
  return -std::clamp((e.reference + e.moving) / e.joint, 1.0, 2.0);
}

// Layout of the NCC sums (reference x, moving y, both shifted by their image means).
enum NccSum { kNccW, kNccX, kNccY, kNccXX, kNccYY, kNccXY, kNccSumCount };

// 1 - NCC, NCC the weighted Pearson correlation of reference and moving over the overlap.
// Worst (2) without overlap or when either image is constant over it.
inline double ncc_cost(const double* s) {
  const double w = s[kNccW];
  const double dev_x = squared_deviation(w, s[kNccX], s[kNccXX]);
  const double dev_y = squared_deviation(w, s[kNccY], s[kNccYY]);
  if (!(w > 0.0) || negligible_spread(dev_x, s[kNccXX]) || negligible_spread(dev_y, s[kNccYY]))
    return kWorstNccCost;
  const double covariance = s[kNccXY] - s[kNccX] * s[kNccY] / w;
  return 1.0 - std::clamp(covariance / std::sqrt(dev_x * dev_y), -1.0, 1.0);
}

// Layout of the least-squares sums.
enum LeastSquaresSum { kLsW, kLsSquaredDifference, kLsSumCount };

// Weighted mean squared difference sum w (x - y)^2 / sum w. Worst (1e30) without overlap.
inline double least_squares_cost(const double* s) {
  if (!(s[kLsW] > 0.0)) return kWorstLeastSquaresCost;
  return std::min(kWorstLeastSquaresCost, s[kLsSquaredDifference] / s[kLsW]);
}

}  // namespace regpipe_common
