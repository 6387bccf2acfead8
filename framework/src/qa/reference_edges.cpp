// The reference edges of the QA picture. The gradient's components are taken in anatomical
// order (x, y, z of the world) and ties are broken towards the right, anterior and inferior
// side, so that one head stored in any voxel order has the same edges.
#include <regpipe/host/qa_picture.hpp>

#include "qa/anatomical_axes.hpp"
#include "qa/for_each_slice.hpp"

#include <algorithm>
#include <cmath>

namespace regpipe {
namespace {

float percentile_99(std::vector<float> v) {
  if (v.empty()) return 0.0f;
  const size_t k = std::min(v.size() - 1, size_t(0.99 * double(v.size())));
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k];
}

// Central-difference gradient (one-sided at the borders) per mm: its magnitude and the world
// axis of its largest component.
struct Gradient {
  std::vector<float> magnitude;
  std::vector<uint8_t> main_axis;
};

Gradient gradient(const Image& image, const AnatomicalAxes& axes) {
  const Eigen::Vector3d spacing = image.spacing();
  const auto& d = image.dims;
  Gradient out{std::vector<float>(image.voxel_count()), std::vector<uint8_t>(image.voxel_count())};
  for_each_slice(d[2], [&](uint32_t z) {
    size_t i = size_t(z) * d[0] * d[1];
    for (uint32_t y = 0; y < d[1]; ++y)
      for (uint32_t x = 0; x < d[0]; ++x, ++i) {
        const uint32_t p[3] = {x, y, z};
        double sum = 0.0, largest = -1.0;
        for (int w = 0; w < 3; ++w) {
          const int a = axes.voxel_axis[w];
          if (d[a] < 2) continue;
          uint32_t lo[3] = {x, y, z}, hi[3] = {x, y, z};
          lo[a] = p[a] > 0 ? p[a] - 1 : 0;
          hi[a] = p[a] + 1 < d[a] ? p[a] + 1 : p[a];
          const double g = (image.at(hi[0], hi[1], hi[2]) - image.at(lo[0], lo[1], lo[2])) /
                           (double(hi[a] - lo[a]) * spacing[a]);
          sum += g * g;
          if (std::abs(g) > largest) largest = std::abs(g), out.main_axis[i] = uint8_t(w);
        }
        out.magnitude[i] = float(std::sqrt(sum));
      }
  });
  return out;
}

}  // namespace

std::vector<uint8_t> reference_edges(const Image& reference) {
  const AnatomicalAxes axes = anatomical_axes(reference);
  const Gradient g = gradient(reference, axes);
  const float threshold = 0.5f * percentile_99(g.magnitude);
  const auto& d = reference.dims;
  const long stride[3] = {1, long(d[0]), long(d[0]) * long(d[1])};
  std::vector<uint8_t> edges(g.magnitude.size());
  for_each_slice(d[2], [&](uint32_t z) {
    size_t i = size_t(z) * d[0] * d[1];
    for (uint32_t y = 0; y < d[1]; ++y)
      for (uint32_t x = 0; x < d[0]; ++x, ++i) {
        const float m = g.magnitude[i];
        if (!(threshold > 0.0f && m > threshold)) continue;
        // Non-maximum suppression along the main axis, `before` being the neighbour on the
        // right, anterior or inferior side; a tie (a step between two voxels gives both the
        // same magnitude) keeps the voxel on that side.
        const int w = g.main_axis[i], a = axes.voxel_axis[w];
        const uint32_t p = a == 0 ? x : a == 1 ? y : z;
        const bool has_lower = p > 0, has_upper = p + 1 < d[a];
        const float lower = has_lower ? g.magnitude[size_t(long(i) - stride[a])] : 0.0f;
        const float upper = has_upper ? g.magnitude[size_t(long(i) + stride[a])] : 0.0f;
        const float before = axes.reversed[w] ? upper : lower, after = axes.reversed[w] ? lower : upper;
        edges[i] = m > before && m >= after;
      }
  });
  return edges;
}

}  // namespace regpipe
