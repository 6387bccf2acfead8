// cpu.cr: 1 - eta(Y|X), the correlation ratio of the moving samples Y given the binned
// reference X (Roche et al. 1998; Li & Kumar 2014 section II.C, eq. 2), as in FLIRT.
#pragma once

#include <regpipe_common/measure_math.hpp>
#include "cr_groups_avx2.hpp"
#include "param_schema.hpp"
#include <regpipe_common/prepared_image.hpp>
#include "settings.hpp"
#include "traversal.hpp"

namespace regpipe::cost_cpu {

// Image preparation, sampling and measure formulas shared with the CUDA costs.
using namespace regpipe_common;

struct CorrelationRatio {
  static constexpr const char* kMeasureName = "correlation ratio";
  static constexpr ParamList kParams = param_list(kCorrelationRatioParams);
  static constexpr bool kNeedsVaryingImages = true;
  static constexpr bool kBinsReference = true;
  static constexpr bool kBinsMoving = false;

  static std::size_t sums_size(const Settings& s) { return kCrBinStride * std::size_t(s.bins); }

  // Adds a sample to its reference bin's {w, w y, w y^2}; y is shifted by the moving image's
  // mean, which leaves every variance unchanged and keeps the sums well conditioned.
  struct Accumulate {
    const PreparedImage& ref;
    double mov_shift;
    void operator()(double* sums, const Sample& s) const {
      double* bin = sums + kCrBinStride * std::size_t(ref.voxel_bins[s.ref_index]);
      const double y = double(s.mov_value) - mov_shift;
      bin[0] += s.weight;
      bin[1] += s.weight * y;
      bin[2] += s.weight * y * y;
    }
#ifdef REGPIPE_COST_CPU_CR_AVX2
    // The same for the samples of `groups` groups of four voxels from reference voxel `index`
    // on, in x order, each of weight 1 (see cr_groups_avx2.hpp), with AVX2.
    void add_unweighted_groups(double* sums, std::size_t index, const float* values,
                               int groups) const {
      add_unweighted_cr_groups_avx2(sums, ref.voxel_bins.data() + index, values, mov_shift,
                                    groups);
    }
#endif
  };
  static Accumulate accumulator(const PreparedImage& ref, const PreparedImage& mov,
                                const Settings&) {
    return {ref, mov.mean};
  }

  static double cost(const double* sums, const Settings& s) noexcept {
    return correlation_ratio_cost(sums, std::size_t(s.bins), kCrBinStride);
  }
};

}  // namespace regpipe::cost_cpu
