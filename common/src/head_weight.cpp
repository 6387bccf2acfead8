#include <regpipe_common/head_weight.hpp>

#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/prepared_image.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

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
  // The 99th percentile without sorting: a histogram of the finite values' order keys' top 14
  // bits (a slab per core) finds the bucket that holds its rank; only that bucket's values are
  // then gathered and ordered. The same value as nth_element over them all, several times faster.
  constexpr std::size_t kBuckets = std::size_t(1) << 14;
  const auto bucket_of = [](float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return ((bits & 0x80000000u) ? ~bits : bits | 0x80000000u) >> 18;  // ascending with v
  };
  const std::size_t slabs = std::min<std::size_t>(usable_cores(), 16);
  std::vector<std::vector<uint32_t>> slab_counts(slabs, std::vector<uint32_t>(kBuckets, 0));
  parallel_slabs(slabs, [&](std::size_t s) {
    uint32_t* counts = slab_counts[s].data();
    for (std::size_t i = slab_begin(count, slabs, s), end = slab_begin(count, slabs, s + 1); i < end; ++i)
      counts[bucket_of(values[i])] += std::isfinite(values[i]);
  });
  std::vector<std::size_t> counts(kBuckets, 0);
  std::size_t finite = 0;
  for (const auto& slab : slab_counts)
    for (std::size_t b = 0; b < kBuckets; ++b) {
      counts[b] += slab[b];
      finite += slab[b];
    }
  if (finite == 0) return 0.f;
  const std::size_t k = std::min(finite - 1, std::size_t(0.99 * double(finite)));
  std::size_t below = 0, bucket = 0;
  while (below + counts[bucket] <= k) below += counts[bucket++];
  std::vector<std::vector<float>> slab_values(slabs);
  parallel_slabs(slabs, [&](std::size_t s) {
    for (std::size_t i = slab_begin(count, slabs, s), end = slab_begin(count, slabs, s + 1); i < end; ++i)
      if (bucket_of(values[i]) == bucket && std::isfinite(values[i])) slab_values[s].push_back(values[i]);
  });
  std::vector<float> in_bucket;
  in_bucket.reserve(counts[bucket]);
  for (const auto& slab : slab_values) in_bucket.insert(in_bucket.end(), slab.begin(), slab.end());
  std::nth_element(in_bucket.begin(), in_bucket.begin() + long(k - below), in_bucket.end());
  return 0.2f * in_bucket[k - below];
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
