#include <regpipe_common/head_weight.hpp>

#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/prepared_image.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace regpipe_common {
namespace {

// 1 inside the head: the foreground and every background voxel that no 6-connected path of
// background joins to a face of the grid (scipy's binary_fill_holes).
std::vector<float> filled_head(const MeasuredImage& image) {
  const Grid& g = image.grid;
  const std::size_t n = image.voxel_count, nx = std::size_t(g.nx), nxy = nx * std::size_t(g.ny);
  const float threshold = foreground_threshold(image.values, n);
  enum : uint8_t { kBackground, kHead, kOutside };
  std::vector<uint8_t> label(n);
  for (std::size_t i = 0; i < n; ++i) label[i] = image.values[i] > threshold ? kHead : kBackground;
  std::vector<std::size_t> stack;
  const auto reach = [&](std::size_t i) {
    if (label[i] != kBackground) return;
    label[i] = kOutside;
    stack.push_back(i);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t x = i % nx, y = (i / nx) % std::size_t(g.ny), z = i / nxy;
    if (x == 0 || y == 0 || z == 0 || x + 1 == nx || y + 1 == std::size_t(g.ny) || z + 1 == std::size_t(g.nz))
      reach(i);
  }
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    const std::size_t x = i % nx, y = (i / nx) % std::size_t(g.ny), z = i / nxy;
    if (x > 0) reach(i - 1);
    if (x + 1 < nx) reach(i + 1);
    if (y > 0) reach(i - nx);
    if (y + 1 < std::size_t(g.ny)) reach(i + nx);
    if (z > 0) reach(i - nxy);
    if (z + 1 < std::size_t(g.nz)) reach(i + nxy);
  }
  std::vector<float> head(n);
  for (std::size_t i = 0; i < n; ++i) head[i] = label[i] == kOutside ? 0.f : 1.f;
  return head;
}

}  // namespace

float foreground_threshold(const float* values, std::size_t count) {
  std::vector<float> v;
  v.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    if (std::isfinite(values[i])) v.push_back(values[i]);
  if (v.empty()) return 0.f;
  const std::size_t k = std::min(v.size() - 1, std::size_t(0.99 * double(v.size())));
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return 0.2f * v[k];
}

std::optional<HeadWeighted> head_weighted(const rp_image& image, const rp_image* weight, double sigma_mm,
                                          const std::string& role) {
  if (!(sigma_mm > 0.0)) return std::nullopt;
  const MeasuredImage measured = measure_image_in_place(image, weight, role);
  HeadWeighted out{filled_head(measured), {}};
  double sigma_voxels[3];
  for (int a = 0; a < 3; ++a) sigma_voxels[a] = std::min(sigma_mm / measured.spacing_mm[a], kMaxFieldSigmaVoxels);
  smooth_image_gaussian(out.values, measured.grid, sigma_voxels);
  for (std::size_t i = 0; i < out.values.size(); ++i) out.values[i] *= measured.weight(i);
  out.weight = image_view(image.dims, image.voxel_to_world, out.values.data());
  return out;
}

}  // namespace regpipe_common
