// Local (neighbourhood) cross-correlation, ANTs' CC metric (Avants et al. 2008, Med Image
// Anal 12:26-41, the CC-driven SyN; ITK's ANTSNeighborhoodCorrelationImageToImageMetricv4),
// with window sums instead of per-voxel window loops, so the work per voxel does not grow
// with the radius (Luo et al. 2015, eqs. 7-9, compute the same sums on the GPU).
//
// With window weights k(x, y) = K(x, y) w(y) (K: the box or Gaussian of local_window.hpp,
// clipped at the grid's faces; w: the voxel weight), for each centre x:
//   fbar = sum k f / sum k,  mbar likewise,
//   A = sum k (f - fbar)(m - mbar),  B = sum k (f - fbar)^2,  C = sum k (m - mbar)^2,
//   rho2(x) = A^2 / (B C),
//   cost = -(1 / W) sum_x w(x) rho2(x),  W = sum w            (in [-1, 0]; 0 when W = 0).
// With a 0/1 weight this is ANTs' value: ANTs sums the window over the in-image, in-mask
// voxels only and averages over the valid centres.
//
// Flat windows. ANTs sets rho2 = 1 when B C is not above the double epsilon 2.2e-16, and no
// gradient unless B and C both are. We keep rho2 = 1 and no gradient, but call a window flat
// when B (or C) is at most kFlatWindowVarianceFraction of the window's weight times the
// image's global weighted variance (local standard deviation below 1e-5 of the global):
// ANTs' absolute epsilon depends on the intensity scale, and sums over windows of intensities
// near 1000 leave rounding residue far above 2.2e-16, which it would read as variance.
//
// Gradient (d cost / d u, dense_image.hpp) in two forms:
//   ants_own_window: what ANTs computes. It differentiates only rho2 of x's OWN window with
//     respect to m(x), treating the window means as fixed (they drop out: sum k (f - fbar) = 0):
//       d rho2(x) / d m(x) = K(x, x) w(x) alpha(x) [(f(x) - fbar(x)) - beta(x) (m(x) - mbar(x))],
//       alpha = 2 A / (B C), beta = A / C,
//     and ignores that m(x) also lies in the windows of its neighbours. Here K(x, x) = 1 and
//     the term is scaled like the cost: grad(x) = -(w(x) / W) d rho2(x) / d m(x) grad m(x).
//     (ANTs itself returns the opposite sign, the ascent direction of ITK's v4 optimisers, and
//     does not divide by W.) This is the update SyN uses; it is not the derivative of the cost.
//   exact: the derivative of the cost, summing that term over every window containing x:
//       d cost / d m(y) = -(w(y) / W) [f(y) K*(w alpha) - K*(w alpha fbar)
//                                      - m(y) K*(w alpha beta) + K*(w alpha beta mbar)],
//     four more window sums (K is symmetric, so it is its own adjoint), O(N) like the cost.
//
// Precision: the images are centred on their global weighted means first (the correlation
// does not change), so the window sums of squares hold the local variance, not the offset.
// The sums along a line are prefix differences: their error is ~1e-16 of the line's total.
//
// Measured (not a test): 128^3 random pair, cost + ANTs gradient, 2 cores of this build
// machine, -O3: 0.19 s at radius 1, 2 and 5 and 0.17 s at 10; the exact gradient 0.23-0.28 s;
// the Gaussian window (sigma 2 mm) 0.33 s.
#pragma once

#include <regpipe_common/dense_metrics/dense_image.hpp>
#include <regpipe_common/dense_metrics/local_window.hpp>

namespace regpipe_common::dense_metrics {

enum class LccGradient { ants_own_window, exact };

struct LocalCcOptions {
  LocalWindow window;
  LccGradient gradient = LccGradient::ants_own_window;
};

inline constexpr double kFlatWindowVarianceFraction = 1e-10;
inline constexpr double kWorstLocalCcCost = 0.0;  // rho2 = 0 everywhere: no overlap

// The global weighted mean and variance of an image, the scale of the flatness test.
struct GlobalMoments {
  double mean = 0.0;
  double variance = 0.0;
};

inline GlobalMoments global_moments(const DenseCostInput& in, std::span<const float> image, double total_weight,
                                    Execution execution) {
  const std::size_t n = image.size();
  GlobalMoments g;
  g.mean = ordered_sum(n, execution, [&](std::size_t i) { return weight_at(in, i) * image[i]; }) / total_weight;
  g.variance = ordered_sum(n, execution, [&](std::size_t i) {
                 const double d = image[i] - g.mean;
                 return weight_at(in, i) * d * d;
               }) / total_weight;
  return g;
}

// The correlation of one window from its weighted deviations; alpha = beta = 0 when flat.
struct WindowCorrelation {
  double rho2 = 1.0, alpha = 0.0, beta = 0.0;
};

inline WindowCorrelation window_correlation(double a, double b, double c, double window_weight, double fixed_variance,
                                            double moving_variance) {
  const bool flat = !(b > kFlatWindowVarianceFraction * window_weight * fixed_variance) ||
                    !(c > kFlatWindowVarianceFraction * window_weight * moving_variance);
  if (flat) return {};
  return {a * a / (b * c), 2.0 * a / (b * c), a / c};
}

// Returns the cost; fills gradient_out (3 per voxel) unless it is empty.
inline double local_cc(const DenseCostInput& in, const LocalCcOptions& options, std::span<double> gradient_out = {},
                       Execution execution = Execution::parallel) {
  check_input(in, gradient_out);
  const std::size_t n = voxel_count(in.grid.dims);
  const double total_weight = ordered_sum(n, execution, [&](std::size_t i) { return weight_at(in, i); });
  if (!gradient_out.empty()) std::fill(gradient_out.begin(), gradient_out.end(), 0.0);
  if (!(total_weight > 0.0)) return kWorstLocalCcCost;
  const GlobalMoments fg = global_moments(in, in.fixed, total_weight, execution);
  const GlobalMoments mg = global_moments(in, in.moving, total_weight, execution);

  // Window sums of w, w f, w m, w f^2, w m^2, w f m (f, m centred).
  enum { kW, kF, kM, kFF, kMM, kFM, kSums };
  std::vector<std::vector<double>> sums(kSums, std::vector<double>(n));
  for_each_slab(n, execution, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t i = begin; i < end; ++i) {
      const double w = weight_at(in, i), f = in.fixed[i] - fg.mean, m = in.moving[i] - mg.mean;
      sums[kW][i] = w;
      sums[kF][i] = w * f;
      sums[kM][i] = w * m;
      sums[kFF][i] = w * f * f;
      sums[kMM][i] = w * m * m;
      sums[kFM][i] = w * f * m;
    }
  });
  for (std::vector<double>& s : sums) window_sums(in.grid, options.window, s, execution);

  const bool want_gradient = !gradient_out.empty();
  const bool exact = options.gradient == LccGradient::exact;
  // Per centre: the cost term; then either ANTs' own-window gradient, or the four terms the
  // exact gradient sums over windows (written over sums kF..kMM, which only x itself reads).
  const double weighted_rho2 = ordered_sum(n, execution, [&](std::size_t i) {
    const double w = weight_at(in, i);
    if (!(w > 0.0)) {
      if (want_gradient && exact) sums[kF][i] = sums[kM][i] = sums[kFF][i] = sums[kMM][i] = 0.0;
      return 0.0;
    }
    const double s = sums[kW][i], fbar = sums[kF][i] / s, mbar = sums[kM][i] / s;
    const double cross = sums[kFM][i] - fbar * sums[kM][i];       // A
    const double fixed_ss = sums[kFF][i] - fbar * sums[kF][i];     // B
    const double moving_ss = sums[kMM][i] - mbar * sums[kM][i];    // C
    const WindowCorrelation cc = window_correlation(cross, fixed_ss, moving_ss, s, fg.variance, mg.variance);
    if (want_gradient && exact) {
      sums[kF][i] = w * cc.alpha;
      sums[kM][i] = w * cc.alpha * fbar;
      sums[kFF][i] = w * cc.alpha * cc.beta;
      sums[kMM][i] = w * cc.alpha * cc.beta * mbar;
    } else if (want_gradient) {
      const double f = in.fixed[i] - fg.mean, m = in.moving[i] - mg.mean;
      const double d_cost_d_m = -(w * w / total_weight) * cc.alpha * ((f - fbar) - cc.beta * (m - mbar));
      for (int a = 0; a < 3; ++a) gradient_out[3 * i + a] = d_cost_d_m * in.moving_gradient[3 * i + a];
    }
    return w * cc.rho2;
  });

  if (want_gradient && exact) {
    for (int k : {kF, kM, kFF, kMM}) window_sums(in.grid, options.window, sums[k], execution);
    for_each_slab(n, execution, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t i = begin; i < end; ++i) {
        const double w = weight_at(in, i);
        if (!(w > 0.0)) continue;
        const double f = in.fixed[i] - fg.mean, m = in.moving[i] - mg.mean;
        const double d_cost_d_m =
            -(w / total_weight) * (f * sums[kF][i] - sums[kM][i] - m * sums[kFF][i] + sums[kMM][i]);
        for (int a = 0; a < 3; ++a) gradient_out[3 * i + a] = d_cost_d_m * in.moving_gradient[3 * i + a];
      }
    });
  }
  return -weighted_rho2 / total_weight;
}

}  // namespace regpipe_common::dense_metrics
