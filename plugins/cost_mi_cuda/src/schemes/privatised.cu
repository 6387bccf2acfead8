// privatised (ours): every block keeps its own bins x bins histogram in shared memory and
// counts reference voxels of one transform at a time into it; lanes of a warp whose samples
// share a joint bin (mostly the background pair) are found with __match_any_sync and add
// once. Counts are integers, so the result does not depend on the order of the atomics:
// exact and bitwise repeatable, and independent of k and of the partition below.
//
// The grid is persistent: as many blocks as the device holds at once (one wave), each
// counting one contiguous, equal share of the k * voxels samples (blocks start at the same
// few voxel offsets of neighbouring transforms, so the blocks resident together read
// neighbouring reference voxels and moving-image regions and share the L2). A block adds its
// histogram to the transform's global one and zeroes it only when it leaves a transform: its
// 16-bit counters never need an early flush because add_narrow sends every 2^16 that
// overflows a counter to global memory, exactly. The kernel waits on its trilinear gathers
// (ncu, H100), so what matters is how many are in flight per SM: blocks as large as the SM
// allows (256 x 256 bins: one of 1024 threads), kUnroll samples per thread and step with
// unconditional loads, the map in shared memory rather than 24 registers, and few
// instructions a sample (division by multiply-high, 32-bit gather offsets). README.md has
// the measurements.
#include "schemes.hpp"

#include <regpipe_common/partial_volume_weights.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>
#include <regpipe_common_cuda/trilinear_32.cuh>

#include <algorithm>
#include <string>

namespace regpipe::cost_mi_cuda {
namespace {

using regpipe_common_cuda::trilinear_32;

// Samples per thread and step, their gathers in flight together (2 and 4 measured the same on
// an H100; 4 needs more registers).
constexpr int kUnroll = 2;

// n / d for 32-bit n by a multiply-high and a shift (Granlund & Montgomery 1994, the
// round-up method with the 33-bit sum in 64 bits): exact for every n, computed once per
// launch for the reference grid's row and plane lengths; a hardware-less 32-bit division
// costs ~20 instructions a sample, this 4.
struct FastDiv {
  uint32_t magic = 1;
  int shift = 0;
  FastDiv() = default;
  explicit FastDiv(uint32_t d) {
    while ((uint64_t(1) << shift) < d) ++shift;
    magic = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }
  __device__ __forceinline__ uint32_t div(uint32_t n) const {
    return uint32_t((uint64_t(__umulhi(n, magic)) + n) >> shift);
  }
};

struct GridDiv {
  FastDiv plane, row;  // by nx * ny and by nx
};

// The position of reference voxel `index` under the map m in moving voxel coordinates, and
// whether it lies inside the moving image and `valid` is true (cost_cpu's traversal.hpp, the
// same operations). A point outside is moved to the first voxel, so that every load stays
// unconditional and the compiler can put the gathers of several samples in flight together.
__device__ __forceinline__ bool moving_position(const MiArgs& a, const GridDiv& d, const volatile double* m,
                                                uint32_t index, bool valid, float& px, float& py, float& pz) {
  const uint32_t plane = uint32_t(a.ref_grid.nx) * uint32_t(a.ref_grid.ny);
  const int z = int(d.plane.div(index));
  const uint32_t rest = index - uint32_t(z) * plane;
  const int y = int(d.row.div(rest));
  const int x = int(rest - uint32_t(y) * uint32_t(a.ref_grid.nx));
  px = float(m[0] * x + m[1] * y + m[2] * z + m[3]);
  py = float(m[4] * x + m[5] * y + m[6] * z + m[7]);
  pz = float(m[8] * x + m[9] * y + m[10] * z + m[11]);
  const bool inside = valid && regpipe_common::inside(a.mov_grid, px, py, pz);
  if (!inside) px = py = pz = 0.f;
  return inside;
}

// The joint bin of reference voxel `index` under the map m, or -1 when it maps outside the
// moving image or `valid` is false: joint_bin's arithmetic (mi_args.hpp), with the map read
// through a volatile pointer so that the shared-memory atomics do not make the compiler keep
// it in registers. For a point inside, the same operations on the same values: the same bin.
__device__ __forceinline__ int joint_bin_of(const MiArgs& a, const GridDiv& d, const volatile double* m,
                                            uint32_t index, bool valid) {
  float px, py, pz;
  const bool inside = moving_position(a, d, m, index, valid, px, py, pz);
  const float v = a.nearest ? regpipe_common::nearest(a.mov, a.mov_grid, px, py, pz)
                            : trilinear_32(a.mov, a.mov_grid, px, py, pz);
  const int mov_bin = regpipe_common::bin_of(v, a.mov_lo, a.mov_inv_width, a.bins);
  const int joint = int(__ldg(a.ref_bins + index)) * a.bins + mov_bin;
  return inside ? joint : -1;
}

// The persistent traversal of both kernels. Sample s of [0, total) is voxel s % voxels of
// transform s / voxels; block b counts [b segment, (b + 1) segment), and the next share a grid
// further on, in pieces of one transform each: the transform's map goes to shared memory
// (`map`), count(t, begin, end) counts voxels [begin, end) of transform t into the block's
// histogram, and flush(t) adds that histogram to transform t's global one and zeroes it.
template <class Count, class Flush>
__device__ __forceinline__ void for_each_piece(double* map, const double* maps, uint32_t voxels, uint64_t total,
                                               uint64_t segment, const Count& count, const Flush& flush) {
  for (uint64_t first = uint64_t(blockIdx.x) * segment; first < total; first += uint64_t(gridDim.x) * segment) {
    const uint64_t last = min(first + segment, total);
    for (uint64_t s = first; s < last;) {
      const uint64_t t = s / voxels;
      const uint32_t begin = uint32_t(s - t * voxels);
      const uint32_t end = uint32_t(min(uint64_t(voxels), uint64_t(begin) + (last - s)));
      if (threadIdx.x < 12) map[threadIdx.x] = __ldg(maps + 12 * t + threadIdx.x);
      __syncthreads();
      count(t, begin, end);
      __syncthreads();
      flush(t);
      __syncthreads();
      s += end - begin;
    }
  }
}

// Adds count (1..32) to entry `bin` of a histogram of 16-bit counters packed two a word
// (entry e in the low half of word e / 2 when e is even, the high half when odd) and keeps
// the counts exact however many a block adds: every 2^16 that leaves a counter goes to the
// transform's global histogram `joint` (the same entry) instead. An add makes a counter wrap
// exactly when the counter's old value (returned by the atomic, in the order the atomics
// happened) plus count exceeds 0xffff, and the adding lane is the only one that sees it:
// - the low counter's wrap carries one into the high counter: the lane adds 2^16 to the low
//   entry in global memory and takes the carry back out of the word (adds 0xffff0000);
// - anything that leaves the 32-bit word (an add to the high counter that wraps it, or the
//   carry or the take-back passing bit 31) is 2^16 of the high entry, and every take-back
//   owes the high entry 2^16 in return, so the lane settles 2^16 x (carries out - 1).
// The word's final halves plus what went to global memory are then exactly the two counts:
// the low counter's running value is its count modulo 2^16 (the take-backs leave the low
// half alone), and the word as a whole is the sum of every add modulo 2^32. Wraps are rare
// (the background pair: one in 65536 of its samples), so the common path is one atomic and
// one compare.
__device__ __forceinline__ void add_narrow(unsigned* hist, unsigned* joint, int bin, unsigned count) {
  unsigned* word = hist + bin / 2;
  if (bin & 1) {
    const unsigned add = count << 16;
    const unsigned old = atomicAdd(word, add);
    if (old > 0xffffffffu - add) atomicAdd(joint + bin, 0x10000u);
    return;
  }
  const unsigned old = atomicAdd(word, count);
  if ((old & 0xffffu) + count <= 0xffffu) return;
  atomicAdd(joint + bin, 0x10000u);
  int high = -1;                                    // the take-back's debt to the high entry
  if (old > 0xffffffffu - count) ++high;            // the carry left the word
  if (atomicAdd(word, 0xffff0000u) >= 0x10000u) ++high;  // the take-back left the word
  if (high != 0) atomicAdd(joint + bin + 1, unsigned(high) << 16);
}

// Adds the block's non-zero counters to joint (one transform's global histogram) and zeroes
// them; 16-byte shared-memory accesses (the histogram's size is padded to 16 bytes).
template <bool Narrow>
__device__ __forceinline__ void flush(uint4* hist, int vectors, unsigned* joint) {
  for (int v = int(threadIdx.x); v < vectors; v += int(blockDim.x)) {
    const uint4 q = hist[v];
    if ((q.x | q.y | q.z | q.w) == 0u) continue;
    hist[v] = make_uint4(0u, 0u, 0u, 0u);
    const unsigned word[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int w = 4 * v + j;
      if (Narrow) {
        // The padding's words stay zero, so no entry past the histogram is touched.
        if (word[j] & 0xffffu) atomicAdd(joint + 2 * w, word[j] & 0xffffu);
        if (word[j] >> 16) atomicAdd(joint + 2 * w + 1, word[j] >> 16);
      } else if (word[j] != 0u) {
        atomicAdd(joint + w, word[j]);
      }
    }
  }
}

// Narrow: two 16-bit counters a 32-bit word (entry e in word e / 2, half e % 2), through
// add_narrow; wide: one 32-bit counter an entry, which cannot overflow (a block flushes at
// least once a transform, and a transform has < 2^31 samples). ptxas (sm_90, CUDA 13.0,
// kUnroll 2): 62 (wide) and 63 (narrow) registers under __maxnreg__(64), 40 under 40, no
// spills either way; 96 bytes of static shared memory (the map). The traversal: for_each_piece.
template <bool Narrow, int kUnroll, int kRegisters>
__global__ void __maxnreg__(kRegisters) privatised_kernel(MiArgs a, GridDiv d, uint32_t voxels, uint64_t total,
                                                           uint64_t segment, int vectors) {
  extern __shared__ uint4 hist4[];
  // The transform's map, read from shared memory at each use: kept in registers it would
  // take 24 of them a thread, which go to more samples in flight instead.
  __shared__ double map[12];
  const volatile double* m = map;
  unsigned* hist = reinterpret_cast<unsigned*>(hist4);
  for (int v = int(threadIdx.x); v < vectors; v += int(blockDim.x)) hist4[v] = make_uint4(0u, 0u, 0u, 0u);
  __syncthreads();

  const int entries = a.bins * a.bins;
  const unsigned lane = threadIdx.x & 31u;
  const uint32_t step = uint32_t(kUnroll) * blockDim.x;
  const auto count_piece = [&](uint64_t t, uint32_t begin, uint32_t end) {
    unsigned* joint = a.joint + t * uint64_t(entries);
    // Every lane runs the same iterations (block-uniform bounds) so the warp votes together.
    for (uint32_t base = begin; base < end; base += step) {
      int bin[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const uint32_t i = base + uint32_t(u) * blockDim.x + threadIdx.x;
        bin[u] = joint_bin_of(a, d, m, i < end ? i : begin, i < end);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const unsigned peers = __match_any_sync(0xffffffffu, bin[u]);
        if (bin[u] < 0 || lane != unsigned(__ffs(peers) - 1)) continue;
        const unsigned count = unsigned(__popc(peers));
        if (Narrow)
          add_narrow(hist, joint, bin[u], count);
        else
          atomicAdd(hist + bin[u], count);
      }
    }
  };
  for_each_piece(map, a.maps, voxels, total, segment, count_piece,
                 [&](uint64_t t) { flush<Narrow>(hist4, vectors, a.joint + t * uint64_t(entries)); });
}

// partial_volume (Maes et al. 1997; Shams et al. 2010 section 3.4), ours in its layout: the
// moving sample is not interpolated; its weight of one is split over its 8 neighbours' moving
// bins in fixed point (regpipe_common::partial_volume_weights: 2^20 units a sample, the parts
// summing to exactly 2^20) and added to 32-bit counters in shared memory. A counter's wrap is
// settled exactly as add_narrow does for 16-bit ones: the lane whose add wraps it (old + v >=
// 2^32, seen in the value the atomic returns) adds 2^32 to the transform's 64-bit global entry,
// so a block never needs an early flush and the sums are exact integers: deterministic and
// bitwise repeatable, whatever the order of the atomics. A sample whose 8 neighbours share one
// moving bin (the background, and the inside of any tissue) weighs exactly 2^20 in one joint
// bin whatever its fractions, so those lanes are grouped by __match_any_sync and add 2^20 x
// count once, as the counting kernel does; a sample across an edge adds its parts, neighbours
// in a row with the same bin merged first.
__device__ __forceinline__ void add_wide(unsigned* hist, unsigned long long* joint, int bin, unsigned v) {
  const unsigned old = atomicAdd(hist + bin, v);
  if (old > 0xffffffffu - v) atomicAdd(joint + bin, 1ull << 32);
}

__device__ __forceinline__ void flush_pv(uint4* hist, int vectors, unsigned long long* joint) {
  for (int v = int(threadIdx.x); v < vectors; v += int(blockDim.x)) {
    const uint4 q = hist[v];
    if ((q.x | q.y | q.z | q.w) == 0u) continue;
    hist[v] = make_uint4(0u, 0u, 0u, 0u);
    const unsigned word[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (word[j] != 0u) atomicAdd(joint + 4 * v + j, (unsigned long long)word[j]);  // padding stays 0
  }
}

// One sample a thread and step: its 8 gathers are in flight together already; the traversal is
// for_each_piece, as privatised_kernel's.
// ptxas (sm_90, CUDA 13.0): 58 registers under __maxnreg__(64), 40 under 40, no spills; 96
// bytes of static shared memory (the map).
template <int kRegisters>
__global__ void __maxnreg__(kRegisters) privatised_pv_kernel(MiArgs a, GridDiv d, uint32_t voxels, uint64_t total,
                                                              uint64_t segment, int vectors) {
  extern __shared__ uint4 hist4[];
  __shared__ double map[12];
  const volatile double* m = map;
  unsigned* hist = reinterpret_cast<unsigned*>(hist4);
  for (int v = int(threadIdx.x); v < vectors; v += int(blockDim.x)) hist4[v] = make_uint4(0u, 0u, 0u, 0u);
  __syncthreads();

  const int entries = a.bins * a.bins;
  const unsigned lane = threadIdx.x & 31u;
  const regpipe_common::Grid& g = a.mov_grid;
  const auto count_piece = [&](uint64_t t, uint32_t begin, uint32_t end) {
    unsigned long long* joint = a.joint_pv + t * uint64_t(entries);
    for (uint32_t base = begin; base < end; base += blockDim.x) {
      const uint32_t i = base + threadIdx.x;
      const uint32_t index = i < end ? i : begin;
      float px, py, pz;
      const bool inside = moving_position(a, d, m, index, i < end, px, py, pz);
      // cpu.mi's add_partial_volume: the neighbours and fractions of regpipe_common::trilinear
      // (upper neighbours clamped), each neighbour's bin that of its own value.
      const int x0 = int(px), y0 = int(py), z0 = int(pz);
      const int sy = g.nx, sz = g.nx * g.ny;
      const int dx = x0 + 1 < g.nx ? 1 : 0;
      const int dy = y0 + 1 < g.ny ? sy : 0;
      const int dz = z0 + 1 < g.nz ? sz : 0;
      const int o = x0 + sy * y0 + sz * z0;
      const int offsets[8] = {o, o + dx, o + dy, o + dy + dx, o + dz, o + dz + dx, o + dz + dy, o + dz + dy + dx};
      int mov_bin[8];
#pragma unroll
      for (int j = 0; j < 8; ++j)
        mov_bin[j] = regpipe_common::bin_of(__ldg(a.mov + offsets[j]), a.mov_lo, a.mov_inv_width, a.bins);
      bool uniform = true;
#pragma unroll
      for (int j = 1; j < 8; ++j) uniform = uniform && mov_bin[j] == mov_bin[0];
      const int row = int(__ldg(a.ref_bins + index)) * a.bins;
      // >= 0: a whole sample in that joint bin; -2: split over several; -1: no sample.
      const int key = !inside ? -1 : uniform ? row + mov_bin[0] : -2;
      const unsigned peers = __match_any_sync(0xffffffffu, key);
      if (key >= 0) {
        if (lane == unsigned(__ffs(peers) - 1))
          add_wide(hist, joint, key, unsigned(__popc(peers)) << regpipe_common::kPartialVolumeFractionBits);
      } else if (key == -2) {
        uint32_t w[8];
        regpipe_common::partial_volume_weights(px - float(x0), py - float(y0), pz - float(z0), w);
        unsigned part = 0;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          part += w[j];
          if (j < 7 && mov_bin[j + 1] == mov_bin[j]) continue;
          if (part != 0u) add_wide(hist, joint, row + mov_bin[j], part);
          part = 0;
        }
      }
    }
  };
  for_each_piece(map, a.maps, voxels, total, segment, count_piece,
                 [&](uint64_t t) { flush_pv(hist4, vectors, a.joint_pv + t * uint64_t(entries)); });
}

bool narrow(int bins, std::size_t shared_per_block) {
  return std::size_t(bins) * std::size_t(bins) * sizeof(unsigned) > shared_per_block;
}

}  // namespace

std::size_t privatised_shared_bytes(int bins, int, std::size_t shared_per_block) {
  const std::size_t entries = std::size_t(bins) * std::size_t(bins);
  const std::size_t words = narrow(bins, shared_per_block) ? (entries + 1) / 2 : entries;
  const std::size_t bytes = (words + 3) / 4 * sizeof(uint4);
  return bytes <= shared_per_block ? bytes : 0;
}

std::size_t privatised_pv_shared_bytes(int bins, int, std::size_t shared_per_block) {
  const std::size_t entries = std::size_t(bins) * std::size_t(bins);
  const std::size_t bytes = (entries + 3) / 4 * sizeof(uint4);
  // + the kernel's static map (12 doubles), which counts against the same per-block limit
  return bytes + 12 * sizeof(double) <= shared_per_block ? bytes : 0;
}

namespace {

using Kernel = void (*)(MiArgs, GridDiv, uint32_t, uint64_t, uint64_t, int);

template <int kRegisters>
Kernel pick(bool is_narrow) {
  return is_narrow ? privatised_kernel<true, kUnroll, kRegisters> : privatised_kernel<false, kUnroll, kRegisters>;
}

}  // namespace

void run_privatised(const SchemeLaunch& l) {
  const bool pv = l.args.joint_pv != nullptr;
  const bool is_narrow = !pv && narrow(l.args.bins, l.shared_per_block);
  const std::size_t bytes = pv ? privatised_pv_shared_bytes(l.args.bins, l.threads_per_block, l.shared_per_block)
                               : privatised_shared_bytes(l.args.bins, l.threads_per_block, l.shared_per_block);
  if (bytes == 0)
    throw rp::Error(RP_INTERNAL, "privatised: bins=" + std::to_string(l.args.bins) +
                                     " does not fit in shared memory (create should have refused it)");
  // Registers: 40 a thread (1536 threads an SM) when an SM holds two or more histograms, 64
  // when it holds one (256 x 256 bins): its block has at most 1024 threads whatever their
  // registers, so they go to keeping the samples' values in flight. Measured on an H100
  // (README): 40 is ~15% faster than 64 at k=1 up to 128 x 128 bins, and 5% slower at 256 x 256.
  // partial_volume: the same rule, not tuned separately (ptxas: 58 registers under 64, 40 under
  // 40, no spills either way).
  int by_shared = 0;
  const Kernel small = pv ? privatised_pv_kernel<40> : pick<40>(is_narrow);
  const Kernel large = pv ? privatised_pv_kernel<64> : pick<64>(is_narrow);
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&by_shared, small, 32, bytes));
  const Kernel kernel = by_shared >= 2 ? small : large;
  const int unroll = pv ? 1 : kUnroll;
  RP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  // The block size that lets an SM run the most threads (registers and histograms decide):
  // threads_per_block or a multiple of it; 256 x 256 bins: one block of 1024 threads.
  int threads = l.threads_per_block, resident = 0, best = 0;
  for (int t = l.threads_per_block; t <= 1024; t += l.threads_per_block) {
    int blocks = 0;
    RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, t, bytes));
    if (blocks * t > best) {
      best = blocks * t;
      threads = t;
      resident = blocks;
    }
  }
  if (resident < 1)
    throw rp::Error(RP_DEVICE, "privatised: no block of " + std::to_string(l.threads_per_block) + " threads with " +
                                   std::to_string(bytes) + " bytes of shared memory fits on the device");

  // One wave of blocks, each counting one contiguous, equal share of the k * voxels samples
  // (flushing when it leaves a transform); fewer blocks when the samples are too few to pay
  // for zeroing and flushing a histogram each (at least 8 steps a block).
  const uint64_t total = uint64_t(l.voxel_count) * uint64_t(l.k);
  const int vectors = int(bytes / sizeof(uint4));
  const uint64_t smallest = uint64_t(8 * unroll * threads);
  uint64_t blocks = uint64_t(resident) * uint64_t(l.sm_count);
  blocks = std::max<uint64_t>(1, std::min(blocks, (total + smallest - 1) / smallest));
  const uint64_t segment = (total + blocks - 1) / blocks;
  const GridDiv d{FastDiv(uint32_t(l.args.ref_grid.nx) * uint32_t(l.args.ref_grid.ny)),
                  FastDiv(uint32_t(l.args.ref_grid.nx))};
  kernel<<<unsigned(blocks), threads, bytes, l.stream>>>(l.args, d, l.voxel_count, total, segment, vectors);
  RP_CUDA_CHECK_LAUNCH(pv ? "privatised_pv_kernel" : "privatised_kernel");
}

}  // namespace regpipe::cost_mi_cuda
