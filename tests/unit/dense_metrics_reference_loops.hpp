// Brute-force forms of the dense costs, for tests only: the same definitions computed the
// slow, obvious way (explicit window loops, two-pass means, every histogram bin), serial.
// Local CC costs O(N (2r+1)^3) for the own-window gradient and twice that for the exact one.
#pragma once

#include <regpipe_common/dense_metrics/local_cc.hpp>
#include <regpipe_common/dense_metrics/mattes_mi.hpp>
#include <regpipe_common/dense_metrics/mean_squares.hpp>

namespace regpipe_common::dense_metrics::reference {

// Calls visit(j, kernel) for each voxel j of the window of voxel (x, y, z), clipped to the grid.
template <class Visit>
void for_each_window_voxel(const DenseGrid& grid, const std::array<std::vector<double>, 3>& taps, long x, long y,
                           long z, const Visit& visit) {
  const Grid& g = grid.dims;
  const long rx = long(taps[0].size()) - 1, ry = long(taps[1].size()) - 1, rz = long(taps[2].size()) - 1;
  for (long k = std::max(0L, z - rz); k <= std::min<long>(g.nz - 1, z + rz); ++k)
    for (long j = std::max(0L, y - ry); j <= std::min<long>(g.ny - 1, y + ry); ++j)
      for (long i = std::max(0L, x - rx); i <= std::min<long>(g.nx - 1, x + rx); ++i)
        visit(std::size_t((k * g.ny + j) * g.nx + i), taps[0][std::labs(i - x)] * taps[1][std::labs(j - y)] * taps[2][std::labs(k - z)]);
}

inline double local_cc(const DenseCostInput& in, const LocalCcOptions& options, std::span<double> gradient_out = {}) {
  check_input(in, gradient_out);
  const Grid& g = in.grid.dims;
  const std::size_t n = voxel_count(g);
  const auto taps = window_taps(in.grid, options.window);
  double total_weight = 0.0;
  for (std::size_t i = 0; i < n; ++i) total_weight += weight_at(in, i);
  if (!gradient_out.empty()) std::fill(gradient_out.begin(), gradient_out.end(), 0.0);
  if (!(total_weight > 0.0)) return kWorstLocalCcCost;
  const GlobalMoments fg = global_moments(in, in.fixed, total_weight, Execution::serial);
  const GlobalMoments mg = global_moments(in, in.moving, total_weight, Execution::serial);

  std::vector<double> fbar(n), mbar(n), alpha(n), beta(n);
  double weighted_rho2 = 0.0;
  for (long z = 0; z < g.nz; ++z)
    for (long y = 0; y < g.ny; ++y)
      for (long x = 0; x < g.nx; ++x) {
        const std::size_t c = std::size_t((z * g.ny + y) * g.nx + x);
        if (!(weight_at(in, c) > 0.0)) continue;
        double s = 0.0, sf = 0.0, sm = 0.0;
        for_each_window_voxel(in.grid, taps, x, y, z, [&](std::size_t j, double kernel) {
          const double k = kernel * weight_at(in, j);
          s += k;
          sf += k * in.fixed[j];
          sm += k * in.moving[j];
        });
        fbar[c] = sf / s;
        mbar[c] = sm / s;
        double a = 0.0, b = 0.0, cc = 0.0;
        for_each_window_voxel(in.grid, taps, x, y, z, [&](std::size_t j, double kernel) {
          const double k = kernel * weight_at(in, j), df = in.fixed[j] - fbar[c], dm = in.moving[j] - mbar[c];
          a += k * df * dm;
          b += k * df * df;
          cc += k * dm * dm;
        });
        const WindowCorrelation r = window_correlation(a, b, cc, s, fg.variance, mg.variance);
        alpha[c] = r.alpha;
        beta[c] = r.beta;
        weighted_rho2 += weight_at(in, c) * r.rho2;
      }
  if (gradient_out.empty()) return -weighted_rho2 / total_weight;

  for (long z = 0; z < g.nz; ++z)
    for (long y = 0; y < g.ny; ++y)
      for (long x = 0; x < g.nx; ++x) {
        const std::size_t c = std::size_t((z * g.ny + y) * g.nx + x);
        const double w = weight_at(in, c);
        if (!(w > 0.0)) continue;
        const double f = in.fixed[c], m = in.moving[c];
        double d_rho2_d_m = 0.0;  // summed over the windows (of centres x') that contain c
        if (options.gradient == LccGradient::ants_own_window) {
          d_rho2_d_m = w * w * alpha[c] * ((f - fbar[c]) - beta[c] * (m - mbar[c]));
        } else {
          for_each_window_voxel(in.grid, taps, x, y, z, [&](std::size_t centre, double kernel) {
            d_rho2_d_m += kernel * weight_at(in, centre) * w * alpha[centre] *
                          ((f - fbar[centre]) - beta[centre] * (m - mbar[centre]));
          });
        }
        for (int a = 0; a < 3; ++a) gradient_out[3 * c + a] = -d_rho2_d_m / total_weight * in.moving_gradient[3 * c + a];
      }
  return -weighted_rho2 / total_weight;
}

inline double mean_squares(const DenseCostInput& in, std::span<double> gradient_out = {}) {
  check_input(in, gradient_out);
  const std::size_t n = voxel_count(in.grid.dims);
  double total_weight = 0.0, squares = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = double(in.fixed[i]) - double(in.moving[i]);
    total_weight += weight_at(in, i);
    squares += weight_at(in, i) * d * d;
  }
  if (!gradient_out.empty()) {
    for (std::size_t i = 0; i < n; ++i)
      for (int a = 0; a < 3; ++a)
        gradient_out[3 * i + a] = total_weight > 0.0 ? -2.0 * weight_at(in, i) * (double(in.fixed[i]) - double(in.moving[i])) /
                                                           total_weight * in.moving_gradient[3 * i + a]
                                                     : 0.0;
  }
  return total_weight > 0.0 ? squares / total_weight : kWorstLeastSquaresCost;
}

// Every voxel against every bin (no four-bin shortcut), marginals and MI summed directly.
inline double mattes_mutual_information(const DenseCostInput& in, const MattesOptions& options,
                                        std::span<double> gradient_out = {}) {
  check_input(in, gradient_out);
  const std::size_t n = voxel_count(in.grid.dims);
  const int bins = options.bins;
  const MattesBinning fb = mattes_binning(in, in.fixed, bins, Execution::serial);
  const MattesBinning mb = mattes_binning(in, in.moving, bins, Execution::serial);
  std::vector<double> p(std::size_t(bins * bins), 0.0);
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = weight_at(in, i);
    if (!(w > 0.0)) continue;
    total += w;
    const int r = fb.clamped_bin(fb.position(in.fixed[i]));
    for (int k = 0; k < bins; ++k) p[std::size_t(r * bins + k)] += w * cubic_bspline(k - mb.position(in.moving[i]));
  }
  if (!gradient_out.empty()) std::fill(gradient_out.begin(), gradient_out.end(), 0.0);
  if (!(total > 0.0)) return kWorstMutualInformationCost;
  for (double& v : p) v /= total;
  auto pf = [&](int r) { double s = 0.0; for (int k = 0; k < bins; ++k) s += p[std::size_t(r * bins + k)]; return s; };
  auto pm = [&](int k) { double s = 0.0; for (int r = 0; r < bins; ++r) s += p[std::size_t(r * bins + k)]; return s; };
  double mi = 0.0;
  for (int r = 0; r < bins; ++r)
    for (int k = 0; k < bins; ++k) {
      const double v = p[std::size_t(r * bins + k)];
      if (v > 0.0) mi += v * std::log(v / (pf(r) * pm(k)));
    }
  if (gradient_out.empty()) return -mi;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = weight_at(in, i);
    if (!(w > 0.0)) continue;
    const int r = fb.clamped_bin(fb.position(in.fixed[i]));
    double sum = 0.0;
    for (int k = 0; k < bins; ++k) {
      const double v = p[std::size_t(r * bins + k)];
      if (v > 0.0) sum += cubic_bspline_derivative(k - mb.position(in.moving[i])) * std::log(v / pm(k));
    }
    for (int a = 0; a < 3; ++a) gradient_out[3 * i + a] = w / (total * mb.width) * sum * in.moving_gradient[3 * i + a];
  }
  return -mi;
}

}  // namespace regpipe_common::dense_metrics::reference
