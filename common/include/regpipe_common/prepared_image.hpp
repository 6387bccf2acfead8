// A validated private copy of an image and its weighting, with what the measures need from it
// (intensity range, mean, histogram bins), computed once per set_reference / set_moving.
#pragma once

#include <regpipe/abi.h>
#include <regpipe_common/voxel_map.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace regpipe_common {

// Equal-width bins over [lo, hi] with hi in the last bin (regpipe_common::bin_of), the
// inverse width rounded once to float so that every scheme bins identically. Values outside
// [lo, hi] (zero-weight voxels) land in the first or last bin.
struct IntensityBinning {
  float lo = 0.f;
  float hi = 0.f;
  float inv_width = 0.f;
  int bins = 0;
  int bin(float v) const {
    return regpipe_common::bin_of(v, lo, inv_width, bins);
  }
};

struct PreparedImage {
  regpipe_common::Grid grid{1, 1, 1};
  double voxel_to_world[16] = {};
  double spacing_mm[3] = {1.0, 1.0, 1.0};  // column lengths of voxel_to_world
  std::vector<float> values;
  std::vector<float> weights;  // empty: weight 1 everywhere
  // Over the voxels with weight > 0 (there is at least one):
  float min_value = 0.f, max_value = 0.f;
  double mean = 0.0;  // weighted; the shift that keeps moment sums well conditioned
  // Set by bin_voxels for the histogram measures:
  IntensityBinning binning;
  std::vector<int32_t> voxel_bins;  // binning.bin(values[i])

  std::size_t voxel_count() const { return values.size(); }
  float weight(std::size_t i) const { return weights.empty() ? 1.f : weights[i]; }
};

// Validates and copies `image` and its optional `weight` (same grid, values >= 0, not all 0).
// `role` ("reference", "moving") starts every message. Throws rp::Error(RP_INVALID_ARGUMENT).
PreparedImage prepare_image(const rp_image& image, const rp_image* weight, const std::string& role);

// Throws "reference image is constant (value 5): correlation ratio is undefined" when the
// weighted voxels hold a single value.
void require_varying(const PreparedImage& image, const std::string& role, const char* measure);

// Bins every voxel over the image's [min_value, max_value]. Throws when that range is too
// narrow for a finite float inverse width.
void bin_voxels(PreparedImage& image, int bins, const std::string& role);

// The binning bin_voxels uses for [lo, hi]; throws as bin_voxels does.
IntensityBinning make_binning(float lo, float hi, int bins, const std::string& role);

// What prepare_image checks and measures, read in place from the caller's arrays (no private
// copy) in parallel slabs: the same checks and messages, and bit for bit the same range and
// total weight. The arrays are borrowed: valid only while the caller's image is.
struct MeasuredImage {
  regpipe_common::Grid grid{1, 1, 1};
  double voxel_to_world[16] = {};
  double spacing_mm[3] = {1.0, 1.0, 1.0};
  const float* values = nullptr;
  const float* weights = nullptr;  // null: weight 1 everywhere
  std::size_t voxel_count = 0;
  // Over the voxels with weight > 0, as PreparedImage:
  float min_value = 0.f, max_value = 0.f;
  double total_weight = 0.0;  // summed in x-fastest order
  // The sum of w v in x-fastest order, where that order's pass ran for total_weight (a
  // weighting image): weighted_mean's numerator, then not summed again.
  std::optional<double> weighted_value_sum;
  // Over every voxel, weight 0 included:
  float min_all = 0.f, max_all = 0.f, max_weight = 1.f;

  float weight(std::size_t i) const { return weights == nullptr ? 1.f : weights[i]; }
};

MeasuredImage measure_image_in_place(const rp_image& image, const rp_image* weight, const std::string& role);

// An rp_image of this header over `data` (borrowed, not copied): how a plugin hands an image it
// holds elsewhere (a device image's header, a host copy of its voxels) to the functions here.
rp_image image_view(const uint32_t dims[3], const double voxel_to_world[16], const float* data);

// measure_image_in_place's checks and geometry of an unweighted image's header only (its
// data pointer must be non-NULL but is not read: values stays NULL), for an image measured
// elsewhere (on the device): total_weight is the voxel count, the range is left to the caller.
MeasuredImage measure_header(const rp_image& image, const std::string& role);

// The refusal of a non-finite voxel value, as every check here words it ("<what> has a
// non-finite value (nan) at voxel (x, y, z)"). Throws rp::Error(RP_INVALID_ARGUMENT).
[[noreturn]] void fail_non_finite(const std::string& what, const regpipe_common::Grid& grid, std::size_t index,
                                  float value);

// PreparedImage::mean, bit for bit: a serial sum in x-fastest order (its order fixes its last
// bits), apart so that callers can overlap it with other work; a weighted image's sum is the
// one measure_image_in_place already made.
double weighted_mean(const MeasuredImage& image);

// Where weighted_mean's result lies for an unweighted image of `count` voxels whose sum in
// another order is `sum` (of absolute values `abs_sum`): any two orders of a sum differ by at
// most 2 gamma_{n-1} abs_sum (Higham, Accuracy and Stability of Numerical Algorithms, 2002,
// eq. 4.4), so the serial mean is in [lo, hi] (widened for the bound's own rounding).
struct MeanBounds {
  double lo = 0.0, hi = 0.0;
};
MeanBounds serial_mean_bounds(double sum, double abs_sum, std::size_t count);

// As require_varying for a PreparedImage.
void require_varying(const MeasuredImage& image, const std::string& role, const char* measure);

}  // namespace regpipe_common
