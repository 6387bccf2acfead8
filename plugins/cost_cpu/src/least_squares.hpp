// cpu.ls: the weighted mean squared intensity difference over the overlap.
#pragma once

#include <regpipe_common/dense_metrics/mean_squares.hpp>
#include <regpipe_common/measure_math.hpp>
#include "param_schema.hpp"
#include <regpipe_common/prepared_image.hpp>
#include "settings.hpp"
#include "traversal.hpp"

namespace regpipe::cost_cpu {

// Image preparation, sampling and measure formulas shared with the CUDA costs.
using namespace regpipe_common;

struct LeastSquares {
  static constexpr const char* kMeasureName = "least squares";
  static constexpr ParamList kParams = param_list(kMomentParams);
  static constexpr bool kNeedsVaryingImages = false;  // defined for any images
  static constexpr bool kBinsReference = false;
  static constexpr bool kBinsMoving = false;

  static std::size_t sums_size(const Settings&) { return kLsSumCount; }

  struct Accumulate {
    const PreparedImage& ref;
    void operator()(double* sums, const Sample& s) const {
      const double d = double(ref.values[s.ref_index]) - double(s.mov_value);
      sums[kLsW] += s.weight;
      sums[kLsSquaredDifference] += s.weight * d * d;
    }
  };
  static Accumulate accumulator(const PreparedImage& ref, const PreparedImage&, const Settings&) {
    return {ref};
  }

  static double cost(const double* sums, const Settings&) noexcept {
    return least_squares_cost(sums);
  }

  // RP_EXT_DENSE_COST: the same measure on a common grid (ANTs' MeanSquares), with its
  // gradient with respect to the moving image's displacement.
  static double dense_cost(const dense_metrics::DenseCostInput& in, std::span<double> gradient,
                           const Settings& s) {
    return dense_metrics::mean_squares(in, gradient, execution_of(s));
  }
};

}  // namespace regpipe::cost_cpu
