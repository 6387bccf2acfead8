// cpu.cr's accumulation four samples at a time with AVX2, for the plain case (an unweighted
// reference, no moving weight, no fuzzy edge: every sample weighs 1): each sample goes to its
// bin with one 4-double add, {1, y, y y, 0} onto the bin's three sums {w, w y, w y y} and its
// padding. The padding (kCrBinStride) keeps each bin's add apart from its neighbours': with
// bins three doubles apart, the add to bin b + 1 overlapped the store of bin b, a partial
// overlap that store-to-load forwarding cannot serve, so neighbouring bins (smooth tissue)
// waited for each store to reach the cache. A run of samples in one bin (the
// background) is added in a register, loaded before the run and stored after it, instead of
// through memory, where each add would wait for the previous one's store. The samples are added
// one after the other in x order with the same double operations as
// CorrelationRatio::Accumulate (1.0 * y is y), so the sums are the scalar path's bit for bit
// (test: CostCpuSumOrder); what is vectorised is the arithmetic, not the order.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define REGPIPE_COST_CPU_CR_AVX2 1
#endif

namespace regpipe::cost_cpu {

// Doubles per bin in cpu.cr's sums: {w, w y, w y y} and one of padding.
inline constexpr std::size_t kCrBinStride = 4;

#ifdef REGPIPE_COST_CPU_CR_AVX2
// Voxels [0, 4 * groups) of `values` (moving samples) and `bins` (their reference bins), added
// to `sums` (kCrBinStride per bin) in that order; y is the value less `shift`.
__attribute__((target("avx2"))) inline void add_unweighted_cr_groups_avx2(
    double* sums, const int32_t* bins, const float* values, double shift, int groups) {
  if (groups == 0) return;
  const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd();
  const __m256d mov_shift = _mm256_set1_pd(shift);
  double* run_bin = sums + kCrBinStride * std::size_t(bins[0]);
  __m256d run = _mm256_loadu_pd(run_bin);
  for (int g = 0; g < 4 * groups; g += 4) {
    const __m256d y = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(values + g)), mov_shift);
    const __m256d yy = _mm256_mul_pd(y, y);
    // Per voxel j: {1, y_j, yy_j, 0}, from the {1, y} and {yy, 0} pairs of voxels 0 and 2
    // and of voxels 1 and 3.
    const __m256d w_y_02 = _mm256_unpacklo_pd(one, y), w_y_13 = _mm256_unpackhi_pd(one, y);
    const __m256d yy_02 = _mm256_unpacklo_pd(yy, zero), yy_13 = _mm256_unpackhi_pd(yy, zero);
    const __m256d voxel[4] = {_mm256_permute2f128_pd(w_y_02, yy_02, 0x20),
                              _mm256_permute2f128_pd(w_y_13, yy_13, 0x20),
                              _mm256_permute2f128_pd(w_y_02, yy_02, 0x31),
                              _mm256_permute2f128_pd(w_y_13, yy_13, 0x31)};
    for (int j = 0; j < 4; ++j) {
      double* bin = sums + kCrBinStride * std::size_t(bins[g + j]);
      if (bin != run_bin) {
        _mm256_storeu_pd(run_bin, run);
        run_bin = bin;
        run = _mm256_loadu_pd(bin);
      }
      run = _mm256_add_pd(run, voxel[j]);
    }
  }
  _mm256_storeu_pd(run_bin, run);
}
#endif

}  // namespace regpipe::cost_cpu
