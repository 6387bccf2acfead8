// The end of an evaluation on the GPU: one block turns a transform's bin sums into its cost
// (regpipe_common's 1 - eta formula, in double), writes cost and overlap weight to the
// caller's output (page-locked host memory the device writes directly), and zeroes the sums
// for the next call, so an evaluate needs neither a memset nor a copy back. Device-only.
// Deterministic: the sums over bins are a fixed tree in double (a different order from
// cpu.cr's left-to-right loop: the last bits of the double cost may differ, ~1e-16).
#pragma once

#include "cr_args.hpp"

#include <regpipe_common/measure_math.hpp>

namespace regpipe::cost_cr_cuda {

constexpr int kFinishMaxWarps = 32;

// Sums each of v[0..N) over the block in a fixed order (warps by xor shuffles, then warp
// partials in warp order) and returns the totals in thread 0's v. The N sums go side by side
// through one pair of barriers; each value's additions and their order are those of a sum
// alone. `scratch` holds kFinishMaxWarps * N values.
template <int N>
__device__ __forceinline__ void block_sums(double (&v)[N], double* scratch) {
  for (int offset = 16; offset > 0; offset /= 2)
    for (int i = 0; i < N; ++i) v[i] += __shfl_xor_sync(0xffffffffu, v[i], offset);
  const int warp = int(threadIdx.x / 32), warps = int((blockDim.x + 31) / 32);
  __syncthreads();  // scratch may still be read from a previous call
  if (threadIdx.x % 32 == 0)
    for (int i = 0; i < N; ++i) scratch[N * warp + i] = v[i];
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int i = 0; i < N; ++i) {
    double total = 0.0;
    for (int w = 0; w < warps; ++w) total += scratch[N * w + i];
    v[i] = total;
  }
}

// The whole block (blockDim.x a multiple of 32) computes transform t's cost from its bin sums,
// read through sum(i) for i in [0, 3 bins) (layout of regpipe_common::correlation_ratio_cost),
// writes it with the overlap weight to a.costs_out / a.overlaps_out, signals it (a.signal: the
// host may read the costs once every transform's are written), then calls clear() so the next
// call starts from zero. overlap_is_weight: the overlap weight is the bins' total
// weight (fused's unweighted kernels, where every sample inside counts with weight 1).
template <class Sum, class Clear>
__device__ void finish_transform(const CrArgs& a, int t, double overlap, Sum sum, Clear clear,
                                 bool overlap_is_weight = false) {
  const int bins = a.bins;
  __shared__ double scratch[kFinishMaxWarps * 4];
  double m[4] = {0.0, 0.0, 0.0, 0.0};  // w, s, ss, within
  for (int b = int(threadIdx.x); b < bins; b += int(blockDim.x)) {
    const double bw = sum(kSumsPerBin * b), bs = sum(kSumsPerBin * b + 1), bss = sum(kSumsPerBin * b + 2);
    m[0] += bw;
    m[1] += bs;
    m[2] += bss;
    m[3] += regpipe_common::squared_deviation(bw, bs, bss);
  }
  block_sums(m, scratch);
  if (threadIdx.x == 0) {
    a.costs_out[t] = regpipe_common::correlation_ratio_from_moments(m[0], m[1], m[2], m[3]);
    a.overlaps_out[t] = overlap_is_weight ? m[0] : overlap;
    regpipe_common_cuda::signal_part_done(a.signal);
  }
  clear();
}

}  // namespace regpipe::cost_cr_cuda
