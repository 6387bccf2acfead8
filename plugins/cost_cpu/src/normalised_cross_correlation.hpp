// cpu.ncc: 1 - NCC, NCC the weighted Pearson correlation of reference and moving intensities
// over the overlap.
#pragma once

#include <regpipe_common/measure_math.hpp>
#include "param_schema.hpp"
#include <regpipe_common/prepared_image.hpp>
#include "settings.hpp"
#include "traversal.hpp"

namespace regpipe::cost_cpu {

// Image preparation, sampling and measure formulas shared with the CUDA costs.
using namespace regpipe_common;

struct NormalisedCrossCorrelation {
  static constexpr const char* kMeasureName = "normalised cross-correlation";
  static constexpr ParamList kParams = param_list(kMomentParams);
  static constexpr bool kNeedsVaryingImages = true;
  static constexpr bool kBinsReference = false;
  static constexpr bool kBinsMoving = false;

  static std::size_t sums_size(const Settings&) { return kNccSumCount; }

  // Both intensities are shifted by their image's mean: correlation is shift-invariant and the
  // moment sums stay well conditioned.
  struct Accumulate {
    const PreparedImage& ref;
    double ref_shift, mov_shift;
    void operator()(double* sums, const Sample& s) const {
      const double x = double(ref.values[s.ref_index]) - ref_shift;
      const double y = double(s.mov_value) - mov_shift;
      const double w = s.weight;
      sums[kNccW] += w;
      sums[kNccX] += w * x;
      sums[kNccY] += w * y;
      sums[kNccXX] += w * x * x;
      sums[kNccYY] += w * y * y;
      sums[kNccXY] += w * x * y;
    }
  };
  static Accumulate accumulator(const PreparedImage& ref, const PreparedImage& mov,
                                const Settings&) {
    return {ref, ref.mean, mov.mean};
  }

  static double cost(const double* sums, const Settings&) noexcept { return ncc_cost(sums); }
};

}  // namespace regpipe::cost_cpu
