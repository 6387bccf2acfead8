// cuda.lcc's per-voxel device code, shared by its kernels (lcc_kernels.cu, lcc_march.cu): the
// global moments' layout, the six window products, and the correlation of one voxel from its
// window sums (regpipe_common/dense_metrics/local_cc.hpp's formulas, in double).
#pragma once

#include "dense_voxels.cuh"

#include <cstddef>

namespace regpipe::cost_dense_cuda {

// The global sums in LccWorkspace::stats: the weight, then sum w (v - v0) and sum w (v - v0)^2
// of each image around its first voxel v0 (one pass; the shift keeps the variance exact where
// the image is flat), then the cost's sum of w rho2.
enum { kStatW, kStatF, kStatM, kStatFF, kStatMM, kStatRho, kStatCount };
constexpr int kMomentCount = kStatRho;  // the sums of the moments pass
// The window sums, in this order.
enum { kSumW, kSumF, kSumM, kSumFF, kSumMM, kSumFM, kSums };
constexpr int kExactTerms = 4;
// Same as regpipe_common::dense_metrics::kFlatWindowVarianceFraction (local_cc.hpp, C++20).
constexpr double kFlatWindowVarianceFraction = 1e-10;

struct Moments {
  double total_weight, inverse_weight, fixed_mean, moving_mean, fixed_variance, moving_variance;
};

// The means and variances from the stats; fixed0 and moving0 are the images' first voxels
// (the shift of the sums).
__device__ __forceinline__ Moments moments_of(const double* stats, float fixed0, float moving0) {
  Moments m;
  m.total_weight = stats[kStatW];
  const bool any = m.total_weight > 0.0;
  m.inverse_weight = any ? 1.0 / m.total_weight : 0.0;
  const double df = any ? stats[kStatF] / m.total_weight : 0.0;
  const double dm = any ? stats[kStatM] / m.total_weight : 0.0;
  m.fixed_mean = any ? double(fixed0) + df : 0.0;
  m.moving_mean = any ? double(moving0) + dm : 0.0;
  m.fixed_variance = any ? fmax(stats[kStatFF] / m.total_weight - df * df, 0.0) : 0.0;
  m.moving_variance = any ? fmax(stats[kStatMM] / m.total_weight - dm * dm, 0.0) : 0.0;
  return m;
}

__device__ __forceinline__ Moments moments_of(const double* stats, const VoxelArgs& a) {
  return moments_of(stats, a.fixed[0], a.moving[0]);
}

// acc[k] += the six window products of one voxel (weight w, centred values f and m); a
// negative w takes the voxel out of the sums.
__device__ __forceinline__ void add_products(double acc[kSums], double w, double f, double m) {
  const double wf = w * f, wm = w * m;
  acc[kSumW] += w;
  acc[kSumF] += wf;
  acc[kSumM] += wm;
  acc[kSumFF] += wf * f;
  acc[kSumMM] += wm * m;
  acc[kSumFM] += wf * m;
}

// What the correlation reads of voxel i besides its window sums, read apart from the arithmetic
// so that a kernel can issue a voxel's loads while it computes the previous one (lcc_march.cu).
struct VoxelReads {
  float fixed, moving, weight;
  CentralDifference difference;  // read only where the gradient is asked
};

__device__ __forceinline__ VoxelReads voxel_reads(const VoxelArgs& a, const long at[3], std::size_t i, bool gradient) {
  VoxelReads v;
  v.weight = a.weight != nullptr ? a.weight[i] : 1.f;
  v.fixed = a.fixed[i];
  v.moving = a.moving[i];
  if (gradient) v.difference = central_difference(a, at, i);
  return v;
}

// Voxel i from its six window sums and its reads: ANTs' gradient into a.gradient_out (if asked),
// or the exact gradient's four terms into `terms` (4 arrays of n, if not null), which the exact
// gradient then window-sums. Returns w rho2, the voxel's share of the cost. Two divisions a
// voxel (the reciprocals of the window weight and of the variances' product).
__device__ __forceinline__ double correlate_voxel(const VoxelArgs& a, const Moments& s, const double sums[kSums],
                                                  const VoxelReads& v, std::size_t i, double* terms) {
  const std::size_t n = a.d.n;
  const double w = a.weight != nullptr ? weight_value(v.weight, a.weight_is_mask) : 1.0;
  if (!(w > 0.0)) {
    if (terms != nullptr) {
      for (int k = 0; k < kExactTerms; ++k) terms[k * n + i] = 0.0;
    } else if (a.gradient_out != nullptr) {
      write_zero_gradient(a, i);
    }
    return 0.0;
  }
  const double window = sums[kSumW], sf = sums[kSumF], sm = sums[kSumM];
  const double inverse_window = 1.0 / window;
  const double fbar = sf * inverse_window, mbar = sm * inverse_window;
  const double cross = sums[kSumFM] - fbar * sm;
  const double fixed_ss = sums[kSumFF] - fbar * sf;
  const double moving_ss = sums[kSumMM] - mbar * sm;
  // window_correlation (local_cc.hpp)
  const bool flat = !(fixed_ss > kFlatWindowVarianceFraction * window * s.fixed_variance) ||
                    !(moving_ss > kFlatWindowVarianceFraction * window * s.moving_variance);
  const double inverse_product = flat ? 0.0 : 1.0 / (fixed_ss * moving_ss);
  const double rho2 = flat ? 1.0 : cross * cross * inverse_product;
  const double alpha = 2.0 * cross * inverse_product;  // 0 where flat
  const double beta = cross * fixed_ss * inverse_product;  // cross / moving_ss
  if (terms != nullptr) {
    terms[0 * n + i] = w * alpha;
    terms[1 * n + i] = w * alpha * fbar;
    terms[2 * n + i] = w * alpha * beta;
    terms[3 * n + i] = w * alpha * beta * mbar;
  } else if (a.gradient_out != nullptr) {
    const double f = v.fixed - s.fixed_mean, m = v.moving - s.moving_mean;
    const double d_cost_d_m = -(w * w * s.inverse_weight) * alpha * ((f - fbar) - beta * (m - mbar));
    write_world_gradient<float>(a, v.difference, i, d_cost_d_m);
  }
  return w * rho2;
}

// The same, reading voxel i = (at[0], at[1], at[2]) first.
__device__ __forceinline__ double correlate_voxel(const VoxelArgs& a, const Moments& s, const double sums[kSums],
                                                  const long at[3], std::size_t i, double* terms) {
  return correlate_voxel(a, s, sums, voxel_reads(a, at, i, terms == nullptr && a.gradient_out != nullptr), i, terms);
}

}  // namespace regpipe::cost_dense_cuda
