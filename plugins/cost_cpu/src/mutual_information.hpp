// cpu.mi and cpu.nmi: -MI and -NMI from the weighted joint histogram of (reference bin,
// moving bin). With partial_volume the moving sample is not interpolated: its weight is split
// over the bins of its 8 neighbours in proportion to their trilinear weights (Maes et al.
// 1997, partial-volume interpolation), which makes the histogram continuous in the transform.
#pragma once

#include <regpipe_common/measure_math.hpp>
#include "param_schema.hpp"
#include <regpipe_common/prepared_image.hpp>
#include "settings.hpp"
#include "traversal.hpp"

#include <algorithm>

namespace regpipe::cost_cpu {

// Image preparation, sampling and measure formulas shared with the CUDA costs.
using namespace regpipe_common;

// Adds a sample to row ref_bin of the ref_bins x mov_bins joint histogram.
struct JointHistogramAccumulate {
  const PreparedImage& ref;
  const PreparedImage& mov;
  bool partial_volume;

  void operator()(double* histogram, const Sample& s) const {
    const std::size_t mov_bins = std::size_t(mov.binning.bins);
    double* row = histogram + std::size_t(ref.voxel_bins[s.ref_index]) * mov_bins;
    if (partial_volume)
      add_partial_volume(row, s);
    else
      row[mov.binning.bin(s.mov_value)] += s.weight;
  }

  void add_partial_volume(double* row, const Sample& s) const {
    const regpipe_common::Grid& g = mov.grid;
    // The same neighbours and fractions as regpipe_common::trilinear (upper ones clamped).
    const int x0 = int(s.x), y0 = int(s.y), z0 = int(s.z);
    const double fx = s.x - float(x0), fy = s.y - float(y0), fz = s.z - float(z0);
    const std::size_t xs[2] = {std::size_t(x0), std::size_t(std::min(x0 + 1, g.nx - 1))};
    const std::size_t ys[2] = {std::size_t(y0), std::size_t(std::min(y0 + 1, g.ny - 1))};
    const std::size_t zs[2] = {std::size_t(z0), std::size_t(std::min(z0 + 1, g.nz - 1))};
    const double wx[2] = {1.0 - fx, fx}, wy[2] = {1.0 - fy, fy}, wz[2] = {1.0 - fz, fz};
    for (int c = 0; c < 2; ++c)
      for (int b = 0; b < 2; ++b)
        for (int a = 0; a < 2; ++a) {
          const std::size_t n = xs[a] + std::size_t(g.nx) * (ys[b] + std::size_t(g.ny) * zs[c]);
          row[mov.voxel_bins[n]] += s.weight * (wx[a] * wy[b] * wz[c]);
        }
  }
};

// The parts MI and NMI share; Cost turns the histogram's entropies into the cost.
template <double (*Cost)(const HistogramEntropies&)>
struct HistogramMeasure {
  static constexpr ParamList kParams = param_list(kHistogramParams);
  static constexpr bool kNeedsVaryingImages = true;
  static constexpr bool kBinsReference = true;
  static constexpr bool kBinsMoving = true;

  static std::size_t sums_size(const Settings& s) {
    return std::size_t(s.bins) * std::size_t(s.bins);
  }

  static JointHistogramAccumulate accumulator(const PreparedImage& ref, const PreparedImage& mov,
                                              const Settings& s) {
    return {ref, mov, s.partial_volume};
  }

  static double cost(const double* histogram, const Settings& s) noexcept {
    return Cost(histogram_entropies(histogram, std::size_t(s.bins), std::size_t(s.bins)));
  }
};

struct MutualInformation : HistogramMeasure<&mutual_information_cost> {
  static constexpr const char* kMeasureName = "mutual information";
};

struct NormalisedMutualInformation : HistogramMeasure<&normalised_mi_cost> {
  static constexpr const char* kMeasureName = "normalised mutual information";
};

}  // namespace regpipe::cost_cpu
