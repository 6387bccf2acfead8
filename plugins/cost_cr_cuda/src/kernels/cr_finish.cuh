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

// Sums v over the block in a fixed order (warps by xor shuffles, then warp partials in warp
// order) and returns the total in thread 0. `scratch` holds kFinishMaxWarps values.
__device__ __forceinline__ double block_sum(double v, double* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const int warp = int(threadIdx.x / 32), warps = int((blockDim.x + 31) / 32);
  __syncthreads();  // scratch may still be read from a previous call
  if (threadIdx.x % 32 == 0) scratch[warp] = v;
  __syncthreads();
  double total = 0.0;
  if (threadIdx.x == 0)
    for (int w = 0; w < warps; ++w) total += scratch[w];
  return total;
}

// The whole block (blockDim.x a multiple of 32) computes transform t's cost from its bin sums,
// read through sum(i) for i in [0, 3 bins) (layout of regpipe_common::correlation_ratio_cost),
// writes it with the overlap weight to a.costs_out / a.overlaps_out, then calls clear() so
// the next call starts from zero. overlap_is_weight: the overlap weight is the bins' total
// weight (fused's unweighted kernels, where every sample inside counts with weight 1).
template <class Sum, class Clear>
__device__ void finish_transform(const CrArgs& a, int t, double overlap, Sum sum, Clear clear,
                                 bool overlap_is_weight = false) {
  const int bins = a.bins;
  __shared__ double scratch[kFinishMaxWarps];
  double w = 0.0, s = 0.0, ss = 0.0, within = 0.0;
  for (int b = int(threadIdx.x); b < bins; b += int(blockDim.x)) {
    const double bw = sum(kSumsPerBin * b), bs = sum(kSumsPerBin * b + 1), bss = sum(kSumsPerBin * b + 2);
    w += bw;
    s += bs;
    ss += bss;
    within += regpipe_common::squared_deviation(bw, bs, bss);
  }
  w = block_sum(w, scratch);
  s = block_sum(s, scratch);
  ss = block_sum(ss, scratch);
  within = block_sum(within, scratch);
  if (threadIdx.x == 0) {
    a.costs_out[t] = regpipe_common::correlation_ratio_from_moments(w, s, ss, within);
    a.overlaps_out[t] = overlap_is_weight ? w : overlap;
  }
  clear();
}

}  // namespace regpipe::cost_cr_cuda
