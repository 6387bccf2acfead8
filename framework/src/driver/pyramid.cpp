#include <regpipe/host/pyramid.hpp>

#include <regpipe/host/error.hpp>
#include <regpipe_common/parallel_slabs.hpp>

#include "image/file_grid_checks.hpp"
#include "io/populate_pages.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>

namespace regpipe {
namespace {

// `count` zeros in `data`, a large level's fresh pages populated in parallel first.
void assign_zeros(std::vector<float>& data, size_t count) {
  data.clear();
  data.reserve(count);
  populate_pages(data.data(), count * sizeof(float));
  data.assign(count, 0.0f);
}

// The voxels along each axis of a level of `image`: the world extent of its voxel centres,
// covered by level voxels centred on it.
std::array<double, 3> level_counts(const Image& image, double level_mm) {
  const Eigen::Vector3d spacing = image.spacing();
  std::array<double, 3> counts{};
  for (int a = 0; a < 3; ++a) counts[a] = std::floor(spacing[a] * (image.dims[a] - 1) / level_mm) + 1.0;
  return counts;
}

// Refuses a level whose grid could not be held (registration.levels_mm far finer than the
// image: 0.001 mm asks for 10^14 voxels) before anything is allocated, saying which level
// would fit. A level is held a few times over (the level, its smoothed input, a cost's copy),
// and GPU kernels index voxels in 32 bits.
void check_level_fits(const Image& image, double level_mm) {
  constexpr double kCopies = 4.0, kMaxVoxels = 2147483647.0;
  const std::optional<uint64_t> budget = image_detail::image_memory_budget();
  const double max_voxels = std::min(kMaxVoxels, budget ? double(*budget) / (sizeof(float) * kCopies) : kMaxVoxels);
  const auto voxels = [&](double mm) {
    const std::array<double, 3> n = level_counts(image, mm);
    return n[0] * n[1] * n[2];
  };
  if (voxels(level_mm) <= max_voxels) return;
  double fits = 64.0;  // the coarsest level a pipeline may ask for; bisect down to the finest that fits
  for (double too_fine = level_mm, i = 0; i < 60; ++i) {
    const double mid = std::sqrt(too_fine * fits);
    (voxels(mid) <= max_voxels ? fits : too_fine) = mid;
  }
  const std::array<double, 3> n = level_counts(image, level_mm);
  char text[320];
  std::snprintf(text, sizeof(text),
                "registration.levels_mm: a %g mm level of a %ux%ux%u image would have %.3gx%.3gx%.3g voxels, "
                "more than this machine can hold; levels of %.2g mm and coarser fit",
                level_mm, image.dims[0], image.dims[1], image.dims[2], n[0], n[1], n[2], fits * 1.01);
  throw UserError(text);
}

}  // namespace

Image level_geometry(const Image& image, double level_mm) {
  Image grid;
  const Eigen::Vector3d spacing = image.spacing();
  const Eigen::Matrix3d axes = image.voxel_to_world.topLeftCorner<3, 3>() *
                               spacing.cwiseInverse().asDiagonal();
  // The world extent of the voxel centres, covered by level voxels centred on it.
  check_level_fits(image, level_mm);
  const std::array<double, 3> counts = level_counts(image, level_mm);
  Eigen::Vector3d first = image.voxel_to_world.topRightCorner<3, 1>();
  for (int a = 0; a < 3; ++a) {
    const double length = spacing[a] * (image.dims[a] - 1);
    const uint32_t n = uint32_t(counts[a]);
    grid.dims[a] = n;
    // Centre the level grid on the original extent along this axis.
    first += axes.col(a) * 0.5 * (length - level_mm * (n - 1));
  }
  grid.voxel_to_world.setIdentity();
  grid.voxel_to_world.topLeftCorner<3, 3>() = axes * level_mm;
  grid.voxel_to_world.topRightCorner<3, 1>() = first;
  return grid;
}

Image level_grid(const Image& image, double level_mm) {
  Image grid = level_geometry(image, level_mm);
  assign_zeros(grid.data, grid.voxel_count());
  return grid;
}

double moving_level_mm(double level_mm, bool decouple_grids) {
  constexpr double kGridStretch = 1.0 + 1.0 / 16.0;
  return decouple_grids ? level_mm * kGridStretch : level_mm;
}

std::array<double, 3> pyramid_sigma_mm(const Image& image, double level_mm) {
  constexpr double kFwhmPerSigma = 2.3548200450309493;  // 2 sqrt(2 ln 2)
  const Eigen::Vector3d spacing = image.spacing();
  std::array<double, 3> sigma{};
  for (int a = 0; a < 3; ++a)
    sigma[a] = std::sqrt(std::max(0.0, level_mm * level_mm - spacing[a] * spacing[a])) / kFwhmPerSigma;
  return sigma;
}

namespace {

// The request for `level` (its grid set) of `image`: smoothed, then trilinear; output to
// level.data (empty for a device level: not read).
rp_resample_request level_request(const rp_image& input, const Image& image, Image& level, double level_mm,
                                  uint64_t input_id) {
  rp_resample_request req{};
  req.size = sizeof(req);
  req.input = &input;
  req.matrix = nullptr;  // same world
  for (int a = 0; a < 3; ++a) req.out_dims[a] = level.dims[a];
  for (int i = 0; i < 16; ++i) req.out_voxel_to_world[i] = level.voxel_to_world(i / 4, i % 4);
  req.out_data = level.data.empty() ? nullptr : level.data.data();
  req.interpolation = RP_INTERP_TRILINEAR;
  const auto sigma = pyramid_sigma_mm(image, level_mm);
  for (int a = 0; a < 3; ++a) req.prefilter_sigma_mm[a] = sigma[a];
  req.background = 0.0f;
  req.input_id = input_id;
  return req;
}

}  // namespace

Image make_level(const Image& image, double level_mm, ResamplerInstance& resampler, uint64_t input_id) {
  Image level = level_grid(image, level_mm);
  const rp_image input = image.view();
  resampler.resample(level_request(input, image, level, level_mm, input_id));
  return level;
}

Level make_device_level(const Image& image, double level_mm, ResamplerInstance& resampler, uint64_t input_id) {
  Level level{level_geometry(image, level_mm), nullptr};
  const rp_image input = image.view();
  level.device = resampler.resample_to_device(level_request(input, image, level.image, level_mm, input_id));
  return level;
}

uint64_t new_input_id() {
  static std::atomic<uint64_t> last{0};
  return ++last;
}

}  // namespace regpipe
