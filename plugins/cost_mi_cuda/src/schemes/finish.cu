// The end of an evaluation on the GPU, in two parallel steps. rows_kernel: one block per
// (bin r, transform) sums row r's and column r's counts and row r's h log h terms; totals_kernel:
// one block per transform sums those partials over r and writes the cost (regpipe_common's
// MI/NMI formulas) and the overlap count to page-locked host memory. Every sum has a fixed
// order (warp xor shuffles, then warps in order), so the costs repeat bit for bit; the order
// differs from cpu.mi's loops, so the last bits of the double cost may differ (~1e-15).
#include "schemes.hpp"

#include <regpipe_common/measure_math.hpp>
#include <regpipe_common/partial_volume_weights.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>

namespace regpipe::cost_mi_cuda {
namespace {

constexpr int kFinishThreads = 256;
constexpr int kPartials = 4;  // per (transform, bin): joint h log h of the row, row total, h log h of row and column

// Sums v over the block in a fixed order; the total is valid in thread 0.
__device__ double block_sum(double v) {
  __shared__ double scratch[kFinishThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  __syncthreads();  // scratch may still be read by a previous call
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  double total = 0.0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kFinishThreads / 32; ++w) total += scratch[w];
  return total;
}

// A histogram entry in samples: a count, or (partial_volume) a fixed-point weight of 2^20
// units a sample, converted exactly (entries stay far below 2^53 units) and scaled by a power
// of two, so h is the weight cpu.mi sums in double up to the quantisation of the parts.
__device__ __forceinline__ double entry(const unsigned* joint, std::size_t e) { return double(joint[e]); }
__device__ __forceinline__ double entry(const unsigned long long* joint, std::size_t e) {
  return double(joint[e]) * (1.0 / double(regpipe_common::kPartialVolumeOne));
}

template <class Count>
__global__ void __launch_bounds__(kFinishThreads) rows_kernel(MiArgs a, const Count* all, int first_transform,
                                                              double* partials) {
  const int r = int(blockIdx.x), t = first_transform + int(blockIdx.y), bins = a.bins;
  const Count* joint = all + std::size_t(t) * bins * bins;
  double row = 0.0, column = 0.0, joint_hlogh = 0.0;
  for (int j = int(threadIdx.x); j < bins; j += kFinishThreads) {
    const double h = entry(joint, std::size_t(r) * bins + j);
    row += h;
    joint_hlogh += regpipe_common::h_log_h(h);
    column += entry(joint, std::size_t(j) * bins + r);
  }
  row = block_sum(row);
  column = block_sum(column);
  joint_hlogh = block_sum(joint_hlogh);
  if (threadIdx.x == 0) {
    double* p = partials + (std::size_t(t) * bins + r) * kPartials;
    p[0] = joint_hlogh;
    p[1] = row;
    p[2] = regpipe_common::h_log_h(row);
    p[3] = regpipe_common::h_log_h(column);
  }
}

__global__ void __launch_bounds__(kFinishThreads) totals_kernel(MiArgs a, bool normalised, const double* partials,
                                                                  double* costs_out, double* overlaps_out) {
  const int t = int(blockIdx.x), bins = a.bins;
  const double* p = partials + std::size_t(t) * bins * kPartials;
  double sums[kPartials] = {0.0, 0.0, 0.0, 0.0};
  for (int r = int(threadIdx.x); r < bins; r += kFinishThreads)
    for (int s = 0; s < kPartials; ++s) sums[s] += p[r * kPartials + s];
  for (int s = 0; s < kPartials; ++s) sums[s] = block_sum(sums[s]);
  if (threadIdx.x != 0) return;
  const regpipe_common::HistogramEntropies e =
      regpipe_common::entropies_from_sums(sums[0], sums[2], sums[3], sums[1]);
  costs_out[t] = normalised ? regpipe_common::normalised_mi_cost(e) : regpipe_common::mutual_information_cost(e);
  overlaps_out[t] = sums[1];
}

}  // namespace

std::size_t finish_partials_size(std::size_t k, int bins) { return k * std::size_t(bins) * kPartials; }

void finish_entropies(const SchemeLaunch& l, bool normalised, double* partials, double* costs_out,
                      double* overlaps_out) {
  constexpr std::size_t kMaxGridY = 65535;
  for (std::size_t first = 0; first < l.k; first += kMaxGridY) {
    const unsigned batch = unsigned(std::min(kMaxGridY, l.k - first));
    const dim3 grid(unsigned(l.args.bins), batch);
    if (l.args.joint_pv != nullptr)
      rows_kernel<<<grid, kFinishThreads, 0, l.stream>>>(l.args, l.args.joint_pv, int(first), partials);
    else
      rows_kernel<<<grid, kFinishThreads, 0, l.stream>>>(l.args, l.args.joint, int(first), partials);
    RP_CUDA_CHECK_LAUNCH("rows_kernel");
  }
  totals_kernel<<<unsigned(l.k), kFinishThreads, 0, l.stream>>>(l.args, normalised, partials, costs_out, overlaps_out);
  RP_CUDA_CHECK_LAUNCH("totals_kernel");
}

}  // namespace regpipe::cost_mi_cuda
