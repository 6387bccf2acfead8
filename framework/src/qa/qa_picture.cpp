#include <regpipe/host/error.hpp>
#include <regpipe/host/qa_picture.hpp>

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

// Central-difference gradient magnitude per mm (one-sided at the borders).
std::vector<float> gradient_magnitude(const Image& image) {
  const Eigen::Vector3d spacing = image.spacing();
  const auto& d = image.dims;
  std::vector<float> out(image.voxel_count());
  for (uint32_t z = 0; z < d[2]; ++z)
    for (uint32_t y = 0; y < d[1]; ++y)
      for (uint32_t x = 0; x < d[0]; ++x) {
        const uint32_t p[3] = {x, y, z};
        double sum = 0.0;
        for (int a = 0; a < 3; ++a) {
          if (d[a] < 2) continue;
          uint32_t lo[3] = {x, y, z}, hi[3] = {x, y, z};
          lo[a] = p[a] > 0 ? p[a] - 1 : 0;
          hi[a] = p[a] + 1 < d[a] ? p[a] + 1 : p[a];
          const double g = (image.at(hi[0], hi[1], hi[2]) - image.at(lo[0], lo[1], lo[2])) /
                           (double(hi[a] - lo[a]) * spacing[a]);
          sum += g * g;
        }
        out[x + size_t(d[0]) * (y + size_t(d[1]) * z)] = float(std::sqrt(sum));
      }
  return out;
}

}  // namespace

std::vector<uint8_t> reference_edges(const Image& reference) {
  const std::vector<float> g = gradient_magnitude(reference);
  const float threshold = 0.5f * percentile_99(g);
  std::vector<uint8_t> edges(g.size());
  for (size_t i = 0; i < g.size(); ++i) edges[i] = threshold > 0.0f && g[i] > threshold;
  return edges;
}

RgbPicture make_qa_picture(const Image& reference, const Image& registered) {
  if (reference.dims != registered.dims || !reference.voxel_to_world.isApprox(registered.voxel_to_world, 1e-6))
    throw UserError("QA picture: the registered image is not on the reference grid");
  const auto& d = reference.dims;
  const std::vector<uint8_t> edges = reference_edges(reference);
  const float white = percentile_99(registered.data);
  // Square pixels of the finest voxel size, so anisotropic voxels keep the head's shape.
  const Eigen::Vector3d spacing = reference.spacing();
  const double pixel_mm = spacing.minCoeff();
  std::array<uint32_t, 3> n{};  // pixels along each axis
  for (int a = 0; a < 3; ++a) n[a] = std::max<uint32_t>(1, uint32_t(std::lround(d[a] * spacing[a] / pixel_mm)));
  auto voxel_of = [&](uint32_t pixel, int a) {
    return std::min(d[a] - 1, uint32_t(std::floor((pixel + 0.5) * pixel_mm / spacing[a])));
  };
  RgbPicture pic;
  pic.width = 2 * n[0] + n[1];
  pic.height = std::max(n[1], n[2]);
  pic.rgb.assign(size_t(pic.width) * pic.height * 3, 0);
  // Copies voxel (x, y, z) to pixel (u, v): an edge in colour, else the moving image in grey.
  auto put = [&](uint32_t u, uint32_t v, uint32_t x, uint32_t y, uint32_t z) {
    const size_t voxel = x + size_t(d[0]) * (y + size_t(d[1]) * z);
    uint8_t* px = &pic.rgb[3 * (size_t(v) * pic.width + u)];
    if (edges[voxel]) {
      std::copy(kQaEdgeColour.begin(), kQaEdgeColour.end(), px);
      return;
    }
    const float t = white > 0.0f ? std::clamp(registered.data[voxel] / white, 0.0f, 1.0f) : 0.0f;
    std::fill(px, px + 3, uint8_t(std::lround(255.0f * t)));
  };
  const uint32_t mx = d[0] / 2, my = d[1] / 2, mz = d[2] / 2;
  for (uint32_t j = 0; j < n[1]; ++j)
    for (uint32_t i = 0; i < n[0]; ++i) put(i, j, voxel_of(i, 0), voxel_of(j, 1), mz);  // axial
  for (uint32_t k = 0; k < n[2]; ++k)
    for (uint32_t i = 0; i < n[0]; ++i)
      put(n[0] + i, n[2] - 1 - k, voxel_of(i, 0), my, voxel_of(k, 2));  // coronal
  for (uint32_t k = 0; k < n[2]; ++k)
    for (uint32_t j = 0; j < n[1]; ++j)
      put(2 * n[0] + j, n[2] - 1 - k, mx, voxel_of(j, 1), voxel_of(k, 2));  // sagittal
  return pic;
}

}  // namespace regpipe
