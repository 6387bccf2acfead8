// Mattes mutual information (Mattes et al. 2003, IEEE TMI 22:120-128, their method: the
// Parzen joint histogram and its analytic derivative), binned as ITK's
// MattesMutualInformationImageToImageMetricv4, ANTs' MI metric:
//   - each image's intensities are mapped over its [min, max] among the voxels of weight > 0
//     onto bins 2 .. bins-2 (two bins of padding each side, bin width (max - min) / (bins - 4)):
//     t(v) = (v - min) / width + 2;
//   - the fixed image takes a zero-order (box) window: its bin is floor(t) clamped to
//     [2, bins-3]; the moving one a cubic B-spline window beta3(kappa - t) over the four bins
//     around t (these sum to 1, so the histogram's total is W = sum w);
//   - p(iota, kappa) = (1 / W) sum_x w(x) [iota = fixed bin(x)] beta3(kappa - t_m(x)), W the
//     histogram's total (= sum w up to rounding), MI = sum over p > 0 of p log(p / (p_F p_M))
//     (nats), cost = -MI; no weight at all gives measure_math's worst MI cost, 0.
// Gradient (d cost / d u, dense_image.hpp), Mattes' derivative with the moving image's own
// variation in place of the transform Jacobian:
//   d cost / d m(x) = w(x) / (W width_m) sum_kappa beta3'(kappa - t_m(x)) log(p(iota_x, kappa) / p_M(kappa)),
// exact for the histogram as defined, with the bin mapping (min, max) held fixed, as ITK does:
// moving the voxel that holds the moving image's min or max would also move every bin.
// Where ITK differs: it takes min and max over the whole fixed and moving images, not the
// warped moving image on the fixed grid. A constant image (max = min) gets bin width 1, so
// all its voxels land at t = 2 and MI = 0.
#pragma once

#include <regpipe_common/dense_metrics/dense_image.hpp>
#include <regpipe_common/dense_metrics/mattes_parzen.hpp>
#include <regpipe_common/measure_math.hpp>

#include <cmath>
#include <limits>

namespace regpipe_common::dense_metrics {

struct MattesOptions {
  int bins = 32;
};

inline MattesBinning mattes_binning(const DenseCostInput& in, std::span<const float> image, int bins,
                                    Execution execution) {
  const std::size_t n = image.size();
  const std::size_t slabs = slab_count(n);
  std::vector<double> lo(slabs, std::numeric_limits<double>::infinity()), hi(slabs, -lo[0]);
  for_each_slab(n, execution, [&](std::size_t begin, std::size_t end, std::size_t s) {
    for (std::size_t i = begin; i < end; ++i) {
      if (!(weight_at(in, i) > 0.0)) continue;
      lo[s] = std::min(lo[s], double(image[i]));
      hi[s] = std::max(hi[s], double(image[i]));
    }
  });
  return mattes_binning_of_range(*std::min_element(lo.begin(), lo.end()), *std::max_element(hi.begin(), hi.end()),
                                 bins);
}

// Returns -MI; fills gradient_out (3 per voxel) unless it is empty.
inline double mattes_mutual_information(const DenseCostInput& in, const MattesOptions& options,
                                        std::span<double> gradient_out = {},
                                        Execution execution = Execution::parallel) {
  check_input(in, gradient_out);
  require(options.bins >= kMinMattesBins, "bins=" + std::to_string(options.bins) + " is below the minimum 5");
  const std::size_t n = voxel_count(in.grid.dims);
  const std::size_t bins = std::size_t(options.bins);
  if (!gradient_out.empty()) std::fill(gradient_out.begin(), gradient_out.end(), 0.0);
  const MattesBinning fixed_bins = mattes_binning(in, in.fixed, options.bins, execution);
  const MattesBinning moving_bins = mattes_binning(in, in.moving, options.bins, execution);

  // Joint histogram, row = fixed bin: one per slab, added in slab order.
  std::vector<std::vector<double>> partial(slab_count(n));
  for_each_slab(n, execution, [&](std::size_t begin, std::size_t end, std::size_t s) {
    std::vector<double>& h = partial[s];
    h.assign(bins * bins, 0.0);
    for (std::size_t i = begin; i < end; ++i) {
      const double w = weight_at(in, i);
      if (!(w > 0.0)) continue;
      double* row = h.data() + std::size_t(fixed_bins.clamped_bin(fixed_bins.position(in.fixed[i]))) * bins;
      const double t = moving_bins.position(in.moving[i]);
      const int first = moving_bins.first_parzen_bin(t);
      for (int k = first; k < first + kMattesParzenTaps; ++k) row[k] += w * cubic_bspline(k - t);
    }
  });
  std::vector<double> joint(bins * bins, 0.0);
  for (const std::vector<double>& h : partial)
    for (std::size_t j = 0; j < h.size(); ++j) joint[j] += h[j];
  std::vector<double> fixed_marginal(bins), moving_marginal(bins), log_ratio(bins * bins);
  double total = 0.0;
  const double cost = mattes_cost_from_joint(joint.data(), options.bins, fixed_marginal.data(), moving_marginal.data(),
                                             log_ratio.data(), &total);
  if (gradient_out.empty() || !(total > 0.0)) return cost;

  for_each_slab(n, execution, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      const double w = weight_at(in, i);
      if (!(w > 0.0)) continue;
      const double* row = log_ratio.data() + std::size_t(fixed_bins.clamped_bin(fixed_bins.position(in.fixed[i]))) * bins;
      const double d_cost_d_m = mattes_d_cost_d_moving(row, moving_bins, moving_bins.position(in.moving[i]), w, total);
      for (int a = 0; a < 3; ++a) gradient_out[3 * i + a] = d_cost_d_m * in.moving_gradient[3 * i + a];
    }
  });
  return cost;
}

}  // namespace regpipe_common::dense_metrics
