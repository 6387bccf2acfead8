#include <regpipe_common/prepared_image.hpp>

#include <regpipe_common/affine_checks.hpp>

#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/resample_request.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <future>
#include <limits>
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

[[noreturn]] void fail_negative_weight(const std::string& what, const regpipe_common::Grid& g, std::size_t i,
                                       float value) {
  std::ostringstream s;
  s << what << " has a negative value (" << value << ") at voxel " << voxel_text(g, i)
    << "; weights must be >= 0";
  fail(s.str());
}

[[noreturn]] void fail_all_zero(const std::string& what) {
  fail(what + " is 0 everywhere; at least one voxel needs a weight > 0");
}

void copy_geometry(const rp_image& image, double voxel_to_world[16], double spacing_mm[3]) {
  const double* m = image.voxel_to_world;
  for (int i = 0; i < 16; ++i) voxel_to_world[i] = m[i];
  for (int c = 0; c < 3; ++c) spacing_mm[c] = axis_spacing(m, c);
}

void fail_if_constant(float min_value, float max_value, bool weighted, const std::string& role,
                      const char* measure) {
  if (min_value < max_value) return;
  std::ostringstream s;
  s << role << " image is constant (value " << min_value << ")"
    << (weighted ? " where its weight is > 0" : "") << ": " << measure << " is undefined";
  fail(s.str());
}

// What one slab of measure_image_in_place finds; `npos` where it found nothing.
constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
struct SlabScan {
  std::size_t bad_value = npos, bad_weight = npos, negative_weight = npos;
  std::size_t weighted = 0;  // voxels with weight > 0
  float min_value = 0.f, max_value = 0.f;
  float min_all = std::numeric_limits<float>::infinity(), max_all = -std::numeric_limits<float>::infinity();
  float max_weight = 0.f;
};

SlabScan scan_slab(const MeasuredImage& m, std::size_t first, std::size_t end) {
  SlabScan s;
  for (std::size_t i = first; i < end; ++i) {
    const float v = m.values[i];
    if (!std::isfinite(v) && s.bad_value == npos) s.bad_value = i;
    s.min_all = std::min(s.min_all, v);
    s.max_all = std::max(s.max_all, v);
    const float w = m.weight(i);
    if (m.weights != nullptr) {
      if (!std::isfinite(w) && s.bad_weight == npos) s.bad_weight = i;
      if (w < 0.f && s.negative_weight == npos) s.negative_weight = i;
      s.max_weight = std::max(s.max_weight, w);
    }
    if (!(w > 0.f)) continue;
    // The first of equal extremes is kept (of -0 and 0, the earlier), as a serial scan keeps it.
    s.min_value = s.weighted == 0 || v < s.min_value ? v : s.min_value;
    s.max_value = s.weighted == 0 || v > s.max_value ? v : s.max_value;
    ++s.weighted;
  }
  return s;
}

// PreparedImage::mean's sums, in voxel order (a different order changes the last bits).
struct SerialSums {
  double weight = 0.0, weighted_values = 0.0;
};

SerialSums serial_sums(const MeasuredImage& m) {
  SerialSums s;
  for (std::size_t i = 0; i < m.voxel_count; ++i) {
    const float w = m.weight(i);
    if (!(w > 0.f)) continue;
    s.weight += w;
    s.weighted_values += double(w) * m.values[i];
  }
  return s;
}

// Below this many voxels one thread scans faster than a pool starts.
constexpr std::size_t kVoxelsPerSlab = std::size_t(1) << 18;
constexpr std::size_t kMaxSlabs = 64;

}  // namespace

void fail_non_finite(const std::string& what, const regpipe_common::Grid& g, std::size_t i, float value) {
  std::ostringstream s;
  s << what << " has a non-finite value (" << value << ") at voxel " << voxel_text(g, i);
  fail(s.str());
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

rp_image image_view(const uint32_t dims[3], const double voxel_to_world[16], const float* data) {
  rp_image view{};
  view.size = sizeof(view);
  std::copy(dims, dims + 3, view.dims);
  std::copy(voxel_to_world, voxel_to_world + 16, view.voxel_to_world);
  view.data = data;
  return view;
}

MeasuredImage measure_header(const rp_image& image, const std::string& role) {
  MeasuredImage m;
  m.grid = checked_grid(image, role + " image");
  copy_geometry(image, m.voxel_to_world, m.spacing_mm);
  m.voxel_count = voxel_count(m.grid);
  m.total_weight = double(m.voxel_count);  // weight 1 each: exact in double below 2^53
  return m;
}

MeasuredImage measure_image_in_place(const rp_image& image, const rp_image* weight, const std::string& role) {
  MeasuredImage m = measure_header(image, role);
  m.values = image.data;
  if (weight != nullptr) {
    checked_grid(*weight, role + " weight");
    check_same_grid(*weight, image, role);
    m.weights = weight->data;
  }
  // A weighted total runs beside the parallel scan (unweighted, it is a count).
  const bool serial = m.weights != nullptr;
  const std::size_t slabs = std::clamp<std::size_t>(m.voxel_count / kVoxelsPerSlab, 1, kMaxSlabs);
  std::future<SerialSums> sums;
  if (serial && slabs > 1) sums = std::async(std::launch::async, serial_sums, std::cref(m));
  std::vector<SlabScan> scans(slabs);
  parallel_slabs(slabs, [&](std::size_t s) {
    scans[s] = scan_slab(m, slab_begin(m.voxel_count, slabs, s), slab_begin(m.voxel_count, slabs, s + 1));
  });
  const std::string weight_name = role + " weight";
  for (const SlabScan& s : scans)
    if (s.bad_value != npos) fail_non_finite(role + " image", m.grid, s.bad_value, m.values[s.bad_value]);
  for (const SlabScan& s : scans)
    if (s.bad_weight != npos) fail_non_finite(weight_name, m.grid, s.bad_weight, m.weights[s.bad_weight]);
  for (const SlabScan& s : scans)
    if (s.negative_weight != npos) fail_negative_weight(weight_name, m.grid, s.negative_weight, m.weights[s.negative_weight]);
  std::size_t weighted = 0;
  m.min_all = scans.front().min_all;
  m.max_all = scans.front().max_all;
  m.max_weight = m.weights == nullptr ? 1.f : 0.f;
  for (const SlabScan& s : scans) {
    if (s.weighted > 0) {
      m.min_value = weighted == 0 || s.min_value < m.min_value ? s.min_value : m.min_value;
      m.max_value = weighted == 0 || s.max_value > m.max_value ? s.max_value : m.max_value;
    }
    weighted += s.weighted;
    m.min_all = std::min(m.min_all, s.min_all);
    m.max_all = std::max(m.max_all, s.max_all);
    if (m.weights != nullptr) m.max_weight = std::max(m.max_weight, s.max_weight);
  }
  if (weighted == 0) fail_all_zero(weight_name);
  m.total_weight = double(weighted);  // weight 1 each: exact in double below 2^53
  if (serial) {
    const SerialSums summed = sums.valid() ? sums.get() : serial_sums(m);
    m.total_weight = summed.weight;
    m.weighted_value_sum = summed.weighted_values;
  }
  return m;
}

double weighted_mean(const MeasuredImage& image) {
  if (image.weighted_value_sum) return *image.weighted_value_sum / image.total_weight;
  const SerialSums sums = serial_sums(image);
  return sums.weighted_values / sums.weight;
}

MeanBounds serial_mean_bounds(double sum, double abs_sum, std::size_t count) {
  const double n = double(count), u = std::ldexp(1.0, -53);
  const double gamma = n * u / (1.0 - n * u);  // gamma_n >= gamma_{n-1}
  // Twice the bound, which covers the rounding of this arithmetic many times over.
  const double error = 4.0 * gamma * abs_sum + std::numeric_limits<double>::denorm_min();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double lo = std::nextafter(sum - error, -kInf), hi = std::nextafter(sum + error, kInf);
  // fl(s / n) is monotonic in s: the quotients of the ends, each widened by an ulp.
  return {std::nextafter(lo / n, -kInf), std::nextafter(hi / n, kInf)};
}

void require_varying(const MeasuredImage& image, const std::string& role, const char* measure) {
  fail_if_constant(image.min_value, image.max_value, image.weights != nullptr, role, measure);
}

PreparedImage prepare_image(const rp_image& image, const rp_image* weight,
                            const std::string& role) {
  // The checks and the range in parallel slabs, in place; then the mean, whose sum must run in
  // voxel order, beside the copies (a weighted image's was summed with its total weight).
  const MeasuredImage m = measure_image_in_place(image, weight, role);
  const bool sum_apart = m.voxel_count >= 2 * kVoxelsPerSlab && !m.weighted_value_sum;
  std::future<double> mean;
  if (sum_apart) mean = std::async(std::launch::async, weighted_mean, std::cref(m));
  PreparedImage p;
  p.grid = m.grid;
  std::copy_n(m.voxel_to_world, 16, p.voxel_to_world);
  std::copy_n(m.spacing_mm, 3, p.spacing_mm);
  p.values.assign(m.values, m.values + m.voxel_count);
  if (m.weights != nullptr) p.weights.assign(m.weights, m.weights + m.voxel_count);
  p.min_value = m.min_value;
  p.max_value = m.max_value;
  p.mean = sum_apart ? mean.get() : weighted_mean(m);
  return p;
}

void require_varying(const PreparedImage& image, const std::string& role, const char* measure) {
  fail_if_constant(image.min_value, image.max_value, !image.weights.empty(), role, measure);
}

void bin_voxels(PreparedImage& image, int bins, const std::string& role) {
  image.binning = make_binning(image.min_value, image.max_value, bins, role);
  const std::size_t n = image.voxel_count();
  image.voxel_bins.resize(n);
  const std::size_t slabs = std::clamp<std::size_t>(n / kVoxelsPerSlab, 1, kMaxSlabs);
  parallel_slabs(slabs, [&](std::size_t s) {
    for (std::size_t i = slab_begin(n, slabs, s); i < slab_begin(n, slabs, s + 1); ++i)
      image.voxel_bins[i] = image.binning.bin(image.values[i]);
  });
}

}  // namespace regpipe_common
