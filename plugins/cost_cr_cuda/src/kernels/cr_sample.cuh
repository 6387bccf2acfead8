// Sampling one reference voxel in the moving image exactly as cost_cpu does (traversal.hpp):
// position in double rounded once to float, the shared inside()/trilinear()/nearest(), the
// weight w_ref * w_mov * border. Device-only.
#pragma once

#include "cr_args.hpp"

namespace regpipe::cost_cr_cuda {

struct CrSample {
  int bin;
  float y;         // moving value minus the moving mean
  float weight;    // > 0 when the sample counts
  float overlap;   // w_ref * w_mov when inside, else 0 (cost_cpu's overlap weight)
};

__device__ __forceinline__ CrSample sample_voxel(const CrArgs& a, const double* __restrict__ m,
                                                 uint32_t index) {
  CrSample s{0, 0.f, 0.f, 0.f};
  const float w_ref = a.ref_weight != nullptr ? __ldg(a.ref_weight + index) : 1.f;
  if (!(w_ref > 0.f)) return s;
  const uint32_t plane = uint32_t(a.ref_grid.nx) * uint32_t(a.ref_grid.ny);
  const int z = int(index / plane);
  const uint32_t rest = index - uint32_t(z) * plane;
  const int y = int(rest / uint32_t(a.ref_grid.nx));
  const int x = int(rest - uint32_t(y) * uint32_t(a.ref_grid.nx));
  const float px = float(m[0] * x + m[1] * y + m[2] * z + m[3]);
  const float py = float(m[4] * x + m[5] * y + m[6] * z + m[7]);
  const float pz = float(m[8] * x + m[9] * y + m[10] * z + m[11]);
  if (!regpipe_common::inside(a.mov_grid, px, py, pz)) return s;
  const float w_mov = a.mov_weight != nullptr
                          ? regpipe_common::trilinear(a.mov_weight, a.mov_grid, px, py, pz)
                          : 1.f;
  s.overlap = float(double(w_ref) * double(w_mov));
  s.weight = float(double(w_ref) * double(w_mov) * a.border(px, py, pz));
  if (!(s.weight > 0.f)) return s;
  const float v = a.nearest ? regpipe_common::nearest(a.mov, a.mov_grid, px, py, pz)
                            : regpipe_common::trilinear(a.mov, a.mov_grid, px, py, pz);
  s.y = v - a.mov_shift;
  s.bin = __ldg(a.ref_bins + index);
  return s;
}

// Li & Kumar's atomic schemes: a grid-stride pass over every reference voxel, each sample
// added to `hist` (bins * 3 sums, zeroed by the caller) with atomics, the products formed in
// T: double counters in global memory (scheme1) or float ones in shared memory (3a, 3b, 4).
// Returns the thread's overlap partial.
template <class T>
__device__ __forceinline__ double accumulate_with_atomics(const CrArgs& a, const double* __restrict__ m,
                                                          uint32_t voxels, T* hist) {
  double overlap = 0.0;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < voxels; i += gridDim.x * blockDim.x) {
    const CrSample s = sample_voxel(a, m, i);
    overlap += s.overlap;
    if (!(s.weight > 0.f)) continue;
    T* bin = hist + kSumsPerBin * s.bin;
    atomicAdd(bin, T(s.weight));
    atomicAdd(bin + 1, T(s.weight) * s.y);
    atomicAdd(bin + 2, T(s.weight) * s.y * s.y);
  }
  return overlap;
}

// Adds a per-thread overlap partial to overlap[t]: warp sum by shuffles, one atomic a warp.
__device__ __forceinline__ void add_overlap(double* overlap, double partial) {
  for (int offset = 16; offset > 0; offset /= 2) partial += __shfl_down_sync(0xffffffffu, partial, offset);
  if ((threadIdx.x & 31) == 0 && partial != 0.0) atomicAdd(overlap, partial);
}

// Adds a block's float histogram (bins * 3, shared memory) to the transform's double sums.
__device__ __forceinline__ void flush_block_histogram(const float* hist, double* sums, int count) {
  for (int i = threadIdx.x; i < count; i += blockDim.x)
    if (hist[i] != 0.f) atomicAdd(sums + i, double(hist[i]));
}

}  // namespace regpipe::cost_cr_cuda
