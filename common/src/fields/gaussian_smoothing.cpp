#include <regpipe_common/fields/gaussian_smoothing.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace regpipe_common {
namespace {

constexpr double kMaximumTailMass = 0.001;

}  // namespace

std::vector<double> discrete_gaussian_taps(double sigma, int axis_length) {
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

namespace {

// Convolves the lines along `axis` (0 = x, 1 = y, 2 = z) of a grid of `components` floats per
// voxel, in place. One routine for fields (3) and images (1), so both smooth alike.
void smooth_axis(float* data, const Grid& g, int components, int axis, double sigma, Execution execution) {
  const int n[3] = {g.nx, g.ny, g.nz};
  const std::size_t stride[3] = {1, std::size_t(g.nx), std::size_t(g.nx) * std::size_t(g.ny)};
  const std::vector<double> w = discrete_gaussian_taps(sigma, n[axis]);
  const int radius = int(w.size()) - 1, length = n[axis];
  const std::size_t c_count = std::size_t(components);
  // Lines are indexed by the two other axes; the outer one is spread over threads.
  const int outer_axis = axis == 2 ? 1 : 2, inner_axis = axis == 0 ? 1 : 0;
  for_each_plane(n[outer_axis], execution, [&](int o) {
    std::vector<double> line(c_count * std::size_t(length));
    for (int k = 0; k < n[inner_axis]; ++k) {
      float* start = data + c_count * (o * stride[outer_axis] + k * stride[inner_axis]);
      for (int i = 0; i < length; ++i)
        for (std::size_t c = 0; c < c_count; ++c) line[c_count * i + c] = start[c_count * i * stride[axis] + c];
      for (int i = 0; i < length; ++i) {
        double sum[3] = {0.0, 0.0, 0.0};
        for (int d = -radius; d <= radius; ++d) {
          const int j = std::clamp(i + d, 0, length - 1);
          const double wd = w[std::abs(d)];
          for (std::size_t c = 0; c < c_count; ++c) sum[c] += wd * line[c_count * j + c];
        }
        for (std::size_t c = 0; c < c_count; ++c) start[c_count * i * stride[axis] + c] = float(sum[c]);
      }
    }
  });
}

void check_sigma(double sigma_voxels, const char* what) {
  if (!(sigma_voxels >= 0.0 && sigma_voxels <= kMaxFieldSigmaVoxels))
    throw rp::Error(RP_INVALID_ARGUMENT, std::string(what) + " smoothing sigma " + std::to_string(sigma_voxels) +
                                             " voxels is outside [0, " +
                                             std::to_string(kMaxFieldSigmaVoxels) + "]");
}

}  // namespace

void smooth_field_gaussian(DisplacementField& field, double sigma_voxels, Execution execution) {
  check_sigma(sigma_voxels, "field");
  if (sigma_voxels == 0.0) return;
  view_of(field);  // checks the geometry and the vector count
  for (int axis = 0; axis < 3; ++axis)
    smooth_axis(field.vectors.data(), field.geometry.dims, 3, axis, sigma_voxels, execution);
}

void smooth_image_gaussian(std::span<float> image, const Grid& dims, const double sigma_voxels[3],
                           Execution execution) {
  for (int axis = 0; axis < 3; ++axis) check_sigma(sigma_voxels[axis], "image");
  if (dims.nx < 1 || dims.ny < 1 || dims.nz < 1 || image.size() != voxel_count(dims))
    throw rp::Error(RP_INVALID_ARGUMENT, "image smoothing: " + std::to_string(image.size()) +
                                             " values do not fill a grid of " + std::to_string(dims.nx) + "x" +
                                             std::to_string(dims.ny) + "x" + std::to_string(dims.nz));
  for (int axis = 0; axis < 3; ++axis)
    if (sigma_voxels[axis] > 0.0) smooth_axis(image.data(), dims, 1, axis, sigma_voxels[axis], execution);
}

}  // namespace regpipe_common
