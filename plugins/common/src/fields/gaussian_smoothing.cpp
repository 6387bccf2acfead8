#include <regpipe_common/fields/gaussian_smoothing.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace regpipe_common {
namespace {

constexpr double kMaximumTailMass = 0.001;

// Taps w[0..radius] of the symmetric discrete Gaussian, normalised over [-radius, radius].
std::vector<double> discrete_gaussian(double sigma, int axis_length) {
  const double t = sigma * sigma;
  std::vector<double> w{std::exp(-t) * std::cyl_bessel_i(0.0, t)};
  double mass = w[0];
  while (mass < 1.0 - kMaximumTailMass && int(w.size()) < axis_length) {
    w.push_back(std::exp(-t) * std::cyl_bessel_i(double(w.size()), t));
    mass += 2.0 * w.back();
  }
  for (double& v : w) v /= mass;
  return w;
}

// Convolves the lines along `axis` (0 = x, 1 = y, 2 = z) in place.
void smooth_axis(DisplacementField& field, int axis, double sigma, Execution execution) {
  const Grid& g = field.geometry.dims;
  const int n[3] = {g.nx, g.ny, g.nz};
  const std::size_t stride[3] = {1, std::size_t(g.nx), std::size_t(g.nx) * std::size_t(g.ny)};
  const std::vector<double> w = discrete_gaussian(sigma, n[axis]);
  const int radius = int(w.size()) - 1, length = n[axis];
  // Lines are indexed by the two other axes; the outer one is spread over threads.
  const int outer_axis = axis == 2 ? 1 : 2, inner_axis = axis == 0 ? 1 : 0;
  for_each_plane(n[outer_axis], execution, [&](int o) {
    std::vector<double> line(3 * std::size_t(length));
    for (int k = 0; k < n[inner_axis]; ++k) {
      float* start = field.vectors.data() + 3 * (o * stride[outer_axis] + k * stride[inner_axis]);
      for (int i = 0; i < length; ++i)
        for (int c = 0; c < 3; ++c) line[3 * i + c] = start[3 * i * stride[axis] + c];
      for (int i = 0; i < length; ++i) {
        double sum[3] = {0.0, 0.0, 0.0};
        for (int d = -radius; d <= radius; ++d) {
          const int j = std::clamp(i + d, 0, length - 1);
          const double wd = w[std::abs(d)];
          for (int c = 0; c < 3; ++c) sum[c] += wd * line[3 * j + c];
        }
        for (int c = 0; c < 3; ++c) start[3 * i * stride[axis] + c] = float(sum[c]);
      }
    }
  });
}

}  // namespace

void smooth_field_gaussian(DisplacementField& field, double sigma_voxels, Execution execution) {
  if (!(sigma_voxels >= 0.0 && sigma_voxels <= kMaxFieldSigmaVoxels))
    throw rp::Error(RP_INVALID_ARGUMENT, "field smoothing sigma " + std::to_string(sigma_voxels) +
                                             " voxels is outside [0, " +
                                             std::to_string(kMaxFieldSigmaVoxels) + "]");
  if (sigma_voxels == 0.0) return;
  view_of(field);  // checks the geometry and the vector count
  for (int axis = 0; axis < 3; ++axis) smooth_axis(field, axis, sigma_voxels, execution);
}

}  // namespace regpipe_common
