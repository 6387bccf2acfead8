// Deterministic sums for the dense costs' kernels: each block of a grid-stride kernel writes its
// partial sums, and one block per sum adds the partials up in a fixed order. The same launch
// gives the same bits every time (no floating-point atomics).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe::cost_dense_cuda {

constexpr int kMaxReduceBlocks = 1024;  // partial sums per reduction, at most

// Blocks of `threads` for a grid-stride loop over n items, at most kMaxReduceBlocks.
inline int reduce_blocks(std::size_t n, int threads) {
  const std::size_t blocks = (n + std::size_t(threads) - 1) / std::size_t(threads);
  return int(blocks < std::size_t(kMaxReduceBlocks) ? (blocks > 0 ? blocks : 1) : kMaxReduceBlocks);
}

// The block's reduction of v by `op` (associative; `identity` its neutral value), valid in
// thread 0; blockDim.x a multiple of 32 (1D blocks). Every thread of the block must call it.
template <class Op>
__device__ inline double block_reduce(double v, Op op, double identity) {
  __shared__ double warp_values[32];
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_values[lane] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
  }
  __syncthreads();  // warp_values may be reused by the next call
  return v;
}

struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};

// The block's total of v, valid in thread 0 (see block_reduce).
__device__ inline double block_sum(double v) { return block_reduce(v, SumOp{}, 0.0); }

// dest[k] = sum over b < blocks of partials[b * count + k], one block per k (gridDim.x = count).
// (In an unnamed namespace: each .cu file that launches it has its own copy.)
namespace {
__global__ void finish_sums(const double* partials, int blocks, int count, double* dest) {
  double v = 0.0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) v += partials[std::size_t(b) * count + blockIdx.x];
  v = block_sum(v);
  if (threadIdx.x == 0) dest[blockIdx.x] = v;
}
}  // namespace

}  // namespace regpipe::cost_dense_cuda
