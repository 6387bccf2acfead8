#include <regpipe_common/prepared_image.hpp>

#include <regpipe_common/affine_checks.hpp>

#include <regpipe/plugin.hpp>

#include <climits>
#include <cmath>
#include <sstream>

namespace regpipe_common {
namespace {

// Two grids are the same when their matrices agree to this (relative) tolerance: headers
// written by different tools round the same geometry differently.
constexpr double kSameGridTolerance = 1e-6;
// 2^40 voxels (4 TiB of float): beyond any scan, and far from overflowing size_t indices.
constexpr double kMaxVoxels = 1099511627776.0;

[[noreturn]] void fail(const std::string& message) {
  throw rp::Error(RP_INVALID_ARGUMENT, message);
}

std::string voxel_text(const regpipe_common::Grid& g, std::size_t i) {
  std::ostringstream s;
  const std::size_t row = i / std::size_t(g.nx);
  s << "(" << i % std::size_t(g.nx) << ", " << row % std::size_t(g.ny) << ", "
    << row / std::size_t(g.ny) << ")";
  return s.str();
}

regpipe_common::Grid checked_grid(const rp_image& image, const std::string& what) {
  if (!RP_HAS_MEMBER(&image, rp_image, data)) {
    std::ostringstream s;
    s << what << " has rp_image.size " << image.size << ", smaller than ABI 1.0's "
      << sizeof(rp_image);
    fail(s.str());
  }
  const uint32_t* d = image.dims;
  if (d[0] < 1 || d[1] < 1 || d[2] < 1 || d[0] > INT_MAX || d[1] > INT_MAX || d[2] > INT_MAX) {
    std::ostringstream s;
    s << what << " has dims " << d[0] << "x" << d[1] << "x" << d[2]
      << "; every dimension must be between 1 and " << INT_MAX;
    fail(s.str());
  }
  if (double(d[0]) * double(d[1]) * double(d[2]) > kMaxVoxels) {
    std::ostringstream s;
    s << what << " has dims " << d[0] << "x" << d[1] << "x" << d[2] << ", more than " << kMaxVoxels
      << " voxels";
    fail(s.str());
  }
  if (image.data == nullptr) fail(what + " has no voxel data (data is NULL)");
  regpipe_common::check_affine(image.voxel_to_world, what + " voxel_to_world");
  return {int(d[0]), int(d[1]), int(d[2])};
}

void check_same_grid(const rp_image& weight, const rp_image& image, const std::string& role) {
  const uint32_t* w = weight.dims;
  const uint32_t* d = image.dims;
  if (w[0] != d[0] || w[1] != d[1] || w[2] != d[2]) {
    std::ostringstream s;
    s << role << " weight has dims " << w[0] << "x" << w[1] << "x" << w[2] << " but the " << role
      << " image has " << d[0] << "x" << d[1] << "x" << d[2]
      << "; a weighting must share its image's grid";
    fail(s.str());
  }
  for (int i = 0; i < 16; ++i) {
    const double a = weight.voxel_to_world[i], b = image.voxel_to_world[i];
    if (std::fabs(a - b) > kSameGridTolerance * (1.0 + std::fabs(b))) {
      std::ostringstream s;
      s << role << " weight's voxel_to_world differs from the " << role << " image's at row "
        << i / 4 << ", column " << i % 4 << " (" << a << " vs " << b
        << "); a weighting must share its image's grid";
      fail(s.str());
    }
  }
}

std::vector<float> copy_values(const rp_image& image, const regpipe_common::Grid& g,
                               const std::string& what) {
  const std::size_t n = std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz);
  std::vector<float> values(image.data, image.data + n);
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i])) {
      std::ostringstream s;
      s << what << " has a non-finite value (" << values[i] << ") at voxel " << voxel_text(g, i);
      fail(s.str());
    }
  return values;
}

std::vector<float> copy_weights(const rp_image& weight, const rp_image& image,
                                const regpipe_common::Grid& g, const std::string& role) {
  const std::string what = role + " weight";
  checked_grid(weight, what);
  check_same_grid(weight, image, role);
  std::vector<float> w = copy_values(weight, g, what);
  bool any_positive = false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] < 0.f) {
      std::ostringstream s;
      s << what << " has a negative value (" << w[i] << ") at voxel " << voxel_text(g, i)
        << "; weights must be >= 0";
      fail(s.str());
    }
    any_positive = any_positive || w[i] > 0.f;
  }
  if (!any_positive) fail(what + " is 0 everywhere; at least one voxel needs a weight > 0");
  return w;
}

void measure_intensities(PreparedImage& p) {
  double sum_w = 0.0, sum_wv = 0.0;
  bool first = true;
  for (std::size_t i = 0; i < p.voxel_count(); ++i) {
    const float w = p.weight(i);
    if (!(w > 0.f)) continue;
    const float v = p.values[i];
    p.min_value = first || v < p.min_value ? v : p.min_value;
    p.max_value = first || v > p.max_value ? v : p.max_value;
    first = false;
    sum_w += w;
    sum_wv += double(w) * v;
  }
  p.mean = sum_wv / sum_w;
}

// Binning works in float (bin_of): the range and its inverse width must both be finite there.
IntensityBinning make_binning(float lo, float hi, int bins, const std::string& role) {
  const float inv_width = float(double(bins) / (double(hi) - double(lo)));
  if (!std::isfinite(inv_width) || !std::isfinite(hi - lo)) {
    std::ostringstream s;
    s << role << " image's intensity range [" << lo << ", " << hi << "] cannot be cut into " << bins
      << " float32 bins";
    fail(s.str());
  }
  return {lo, hi, inv_width, bins};
}

}  // namespace

PreparedImage prepare_image(const rp_image& image, const rp_image* weight,
                            const std::string& role) {
  PreparedImage p;
  p.grid = checked_grid(image, role + " image");
  for (int i = 0; i < 16; ++i) p.voxel_to_world[i] = image.voxel_to_world[i];
  for (int c = 0; c < 3; ++c) {
    const double* m = image.voxel_to_world;
    p.spacing_mm[c] = std::sqrt(m[c] * m[c] + m[4 + c] * m[4 + c] + m[8 + c] * m[8 + c]);
  }
  p.values = copy_values(image, p.grid, role + " image");
  if (weight != nullptr) p.weights = copy_weights(*weight, image, p.grid, role);
  measure_intensities(p);
  return p;
}

void require_varying(const PreparedImage& image, const std::string& role, const char* measure) {
  if (image.min_value < image.max_value) return;
  std::ostringstream s;
  s << role << " image is constant (value " << image.min_value << ")"
    << (image.weights.empty() ? "" : " where its weight is > 0") << ": " << measure
    << " is undefined";
  fail(s.str());
}

void bin_voxels(PreparedImage& image, int bins, const std::string& role) {
  image.binning = make_binning(image.min_value, image.max_value, bins, role);
  image.voxel_bins.resize(image.voxel_count());
  for (std::size_t i = 0; i < image.voxel_count(); ++i)
    image.voxel_bins[i] = image.binning.bin(image.values[i]);
}

}  // namespace regpipe_common
