// Known-truth cases for SyN (issue 16): an image warped by a smooth random diffeomorphism of
// known field, and the figures a registration back is judged by. Header-only on
// regpipe_common, so both the standalone unit executable and the registration suite use it.
#pragma once

#include <regpipe_common/fields/abi_views.hpp>
#include <regpipe_common/fields/composition.hpp>
#include <regpipe_common/fields/jacobian.hpp>
#include <regpipe_common/fields/random_diffeomorphism.hpp>
#include <regpipe_common/fields/scaling_squaring.hpp>
#include <regpipe_common/fields/warp_image.hpp>
#include <regpipe_common/syn/syn_options.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace regpipe_common::syn_test {

inline rp_image image_view(const FieldGeometry& grid, const std::vector<float>& data) {
  return regpipe_common::image_view(grid, data.data());
}

struct KnownWarp {
  FieldGeometry grid;
  std::vector<float> fixed, moving;
  // The true forward field (fixed point -> moving point, SynResult::forward's meaning) exp(v),
  // and the true inverse exp(-v); moving(x) = fixed(x + exp(-v)(x)), so moving seen through
  // the true forward is fixed.
  DisplacementField truth_forward, truth_inverse;
  std::vector<unsigned char> foreground;  // where the figures are measured
};

// `fixed` on `grid` warped by a random diffeomorphism of `max_displacement_mm` whose noise is
// smoothed by `length_scale_voxels`; foreground = fixed above `foreground_threshold`.
inline KnownWarp known_warp(const FieldGeometry& grid, std::vector<float> fixed, double max_displacement_mm,
                            double length_scale_voxels, std::uint64_t seed, float foreground_threshold) {
  RandomDiffeomorphismOptions options;
  options.seed = seed;
  options.smoothing_sigma_voxels = length_scale_voxels;
  options.max_displacement_mm = max_displacement_mm;
  RandomDiffeomorphism truth = random_smooth_diffeomorphism(grid, options);
  DisplacementField minus_v = truth.velocity;
  for (float& c : minus_v.vectors) c = -c;
  KnownWarp k{grid, std::move(fixed), {}, std::move(truth.displacement),
              exponentiate_velocity(minus_v, truth.squarings), {}};
  k.moving = warp_image(image_view(grid, k.fixed), view_of(k.truth_inverse), grid, 0.0f);
  k.foreground.resize(k.fixed.size());
  for (std::size_t i = 0; i < k.fixed.size(); ++i) k.foreground[i] = k.fixed[i] > foreground_threshold;
  return k;
}

struct Figures {
  double initial_endpoint_mm = 0;  // mean |truth forward| over the foreground: the error of doing nothing
  double mean_endpoint_mm = 0, max_endpoint_mm = 0;  // |forward - truth forward| over the foreground
  double mean_inverse_endpoint_mm = 0;               // |inverse - truth inverse| over the foreground
  double min_jacobian = 0, fraction_negative = 0;    // of the forward field, every voxel
  double mean_consistency_mm = 0, max_consistency_mm = 0;  // |forward then inverse| over the foreground
  std::size_t foreground_voxels = 0;
};

inline Figures figures_of(const syn::SynResult& r, const KnownWarp& k) {
  Figures f;
  const DisplacementField round_trip = compose_first_then_second(view_of(r.forward), view_of(r.inverse));
  const JacobianDeterminants j = jacobian_determinants(view_of(r.forward));
  f.min_jacobian = j.min;
  f.fraction_negative = j.fraction_negative;
  auto at = [](const DisplacementField& d, std::size_t i) {
    return Vec3{d.vectors[3 * i], d.vectors[3 * i + 1], d.vectors[3 * i + 2]};
  };
  for (std::size_t i = 0; i < k.foreground.size(); ++i) {
    if (!k.foreground[i]) continue;
    ++f.foreground_voxels;
    const double e = norm(at(r.forward, i) - at(k.truth_forward, i));
    const double c = norm(at(round_trip, i));
    f.initial_endpoint_mm += norm(at(k.truth_forward, i));
    f.mean_endpoint_mm += e;
    f.max_endpoint_mm = std::max(f.max_endpoint_mm, e);
    f.mean_inverse_endpoint_mm += norm(at(r.inverse, i) - at(k.truth_inverse, i));
    f.mean_consistency_mm += c;
    f.max_consistency_mm = std::max(f.max_consistency_mm, c);
  }
  const double n = double(std::max<std::size_t>(f.foreground_voxels, 1));
  f.initial_endpoint_mm /= n;
  f.mean_endpoint_mm /= n;
  f.mean_inverse_endpoint_mm /= n;
  f.mean_consistency_mm /= n;
  return f;
}

// What a known-truth registration must show, each test with its own margins.
struct Bounds {
  double max_mean_endpoint_mm;   // of the forward field, and of the inverse against its truth
  double max_identity_fraction;  // the forward's mean error below this fraction of the identity's
  double min_jacobian;           // and no voxel with a negative determinant
  // Forward then inverse at grid points: the inverse is sampled between its grid points, so
  // this is zero only up to trilinear interpolation.
  double max_mean_consistency_mm = 0.05;
  double max_max_consistency_mm = 0.3;
};

inline void expect_within(const Figures& f, const Bounds& b, const std::string& what) {
  EXPECT_LT(f.mean_endpoint_mm, b.max_mean_endpoint_mm) << what;
  EXPECT_LT(f.mean_endpoint_mm, b.max_identity_fraction * f.initial_endpoint_mm) << what;
  EXPECT_LT(f.mean_inverse_endpoint_mm, b.max_mean_endpoint_mm) << what;
  EXPECT_GT(f.min_jacobian, b.min_jacobian) << what;
  EXPECT_EQ(f.fraction_negative, 0.0) << what;
  EXPECT_LT(f.mean_consistency_mm, b.max_mean_consistency_mm) << what;
  EXPECT_LT(f.max_consistency_mm, b.max_max_consistency_mm) << what;
}

inline std::string describe(const Figures& f, const syn::SynResult& r) {
  char line[512];
  std::snprintf(line, sizeof line,
                "endpoint error mean %.3f mm (max %.2f; identity %.3f), inverse %.3f mm; Jacobian min %.3f "
                "(%.4f negative); forward then inverse mean %.4f max %.4f mm; %zu foreground voxels; iterations",
                f.mean_endpoint_mm, f.max_endpoint_mm, f.initial_endpoint_mm, f.mean_inverse_endpoint_mm,
                f.min_jacobian, f.fraction_negative, f.mean_consistency_mm, f.max_consistency_mm,
                f.foreground_voxels);
  std::string s = line;
  for (const syn::SynLevelReport& l : r.levels) {
    std::snprintf(line, sizeof line, " %zu%s (%.1f s, metric %.4f -> %.4f)", l.metric_values.size(),
                  l.converged ? "c" : "", l.seconds, l.metric_values.empty() ? 0.0 : l.metric_values.front(),
                  l.metric_values.empty() ? 0.0 : l.metric_values.back());
    s += line;
  }
  return s;
}

}  // namespace regpipe_common::syn_test
