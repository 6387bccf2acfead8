// privatised (ours): every block keeps its own bins x bins histogram in shared memory and
// counts reference voxels of one transform at a time into it; the first lane of a run of
// neighbouring lanes whose samples share a joint bin (mostly the background pair) adds the
// run once (run_length_at_head). Counts are integers, so the result does not depend on the
// order of the atomics: exact and bitwise repeatable, and independent of k and of the
// partition below.
//
// The grid is persistent: at most as many blocks as the device holds at once (one wave),
// each counting items of one transform's voxel range (for_each_item). A block adds its
// histogram to the transform's global one and zeroes it only when it leaves a transform: its
// 16-bit counters never need an early flush because add_narrow sends every 2^16 that
// overflows a counter to global memory, exactly. What matters is how many trilinear gathers
// are in flight per SM and how few instructions a sample takes: blocks as large as the SM
// allows (256 x 256 bins: one of 1024 threads), kUnroll samples per thread and step in one
// branch-free block (their gathers issued together), the moving image's trilinear quads in
// batches (two 16-byte loads a sample instead of eight floats), the map read once a step,
// division by multiply-high, 32-bit gather offsets, no division to find an item, and no
// MATCH.ANY. README.md has the measurements.
#include "schemes.hpp"

#include <regpipe_common/partial_volume_weights.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>
#include <regpipe_common_cuda/trilinear_32.cuh>

#include <algorithm>
#include <array>
#include <climits>
#include <string>

namespace regpipe::cost_mi_cuda {
namespace {

using regpipe_common_cuda::trilinear_32;
using regpipe_common_cuda::trilinear_quads;

// How a kernel reads the moving image: the nearest voxel, or trilinear from the floats or from
// the quads (MiArgs::mov_quads). A template parameter, so that the step's samples are one
// branch-free block: all their loads in flight together.
enum class Sampling { kNearest, kTrilinear, kQuads };

// Samples per thread and step, their gathers in flight together (2 and 4 measured the same on
// an H100 at 256^2 bins, k = 64: 72.0-72.6 against 71.8 us; 4 slower at k = 1).
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
__device__ __forceinline__ bool moving_position(const MiArgs& a, const GridDiv& d, const double* m, uint32_t index,
                                                bool valid, float& px, float& py, float& pz) {
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

// The transform's map, copied from shared memory into registers: kept there for a whole piece
// it would take 24 registers a thread, which go to samples in flight instead. Under 64
// registers one read serves a step's samples (six 16-byte loads; the registers are free again
// once the positions are known, before the gathers); the shared-memory atomics between steps
// may alias it, so the compiler reads it again each step. Under 40 that would spill, so each
// sample reads it (PerSample: through a volatile pointer, twelve loads, not merged).
struct StepMap {
  double m[12];
};

template <bool PerSample>
__device__ __forceinline__ StepMap read_map(const double2* map) {
  StepMap s;
  if constexpr (PerSample) {
    const volatile double* v = reinterpret_cast<const volatile double*>(map);
#pragma unroll
    for (int j = 0; j < 12; ++j) s.m[j] = v[j];
  } else {
#pragma unroll
    for (int j = 0; j < 6; ++j) {
      const double2 pair = map[j];
      s.m[2 * j] = pair.x;
      s.m[2 * j + 1] = pair.y;
    }
  }
  return s;
}

// The joint bin of reference voxel `index` under the map m, or -1 when it maps outside the
// moving image or `valid` is false: joint_bin's arithmetic (mi_args.hpp). For a point inside,
// the same operations on the same values: the same bin.
template <Sampling S>
__device__ __forceinline__ int joint_bin_of(const MiArgs& a, const GridDiv& d, const double* m, uint32_t index,
                                            bool valid) {
  float px, py, pz;
  const bool inside = moving_position(a, d, m, index, valid, px, py, pz);
  const float v = S == Sampling::kNearest ? regpipe_common::nearest(a.mov, a.mov_grid, px, py, pz)
                  : S == Sampling::kQuads ? trilinear_quads(a.mov_quads, a.mov_grid, px, py, pz)
                                          : trilinear_32(a.mov, a.mov_grid, px, py, pz);
  const int mov_bin = regpipe_common::bin_of(v, a.mov_lo, a.mov_inv_width, a.bins);
  const int joint = int(__ldg(a.ref_bins + index)) * a.bins + mov_bin;
  return inside ? joint : -1;
}

// The items of a launch: each transform's voxels cut into `pieces` ranges, the first
// `remainder` of them one voxel longer than `quotient`; item w is piece w / k of transform
// w % k (k < 2^32, checked at the launch).
struct Items {
  uint32_t k, pieces, quotient, remainder;
};

// The persistent traversal of both kernels. Block b counts items b, b + grid, b + 2 grid, ...
// Items of one piece come together, so the blocks that run at the same time count the same
// voxel range under neighbouring transforms and read the same reference and moving-image
// regions: at k = 64 the moving image's trilinear quads come from L2, read from memory once a
// batch (contiguous shares of the k * voxels samples put the blocks at as many different
// offsets: 107-123 us an evaluation with the quads on an H100, against 61-70; README). A
// block's next item is found by adding (no division an item: five 64-bit ones an item cost
// ~6 us at k = 1 and 16^2..64^2 bins, where a block counts 26 steps). For an item the
// transform's map goes to shared memory (`map`), count(t, begin, end) counts voxels
// [begin, end) of transform t into the block's histogram, and flush(t) adds that histogram to
// transform t's global one and zeroes it, once the block's next item is of another transform.
template <class Count, class Flush>
__device__ __forceinline__ void for_each_item(double* map, const double* maps, const Items& items, const Count& count,
                                              const Flush& flush) {
  const uint32_t t_step = gridDim.x % items.k, piece_step = gridDim.x / items.k;
  uint32_t t = blockIdx.x % items.k, piece = blockIdx.x / items.k;
  while (piece < items.pieces) {
    const uint32_t begin = piece * items.quotient + min(piece, items.remainder);
    const uint32_t end = begin + items.quotient + (piece < items.remainder ? 1u : 0u);
    if (threadIdx.x < 12) map[threadIdx.x] = __ldg(maps + 12 * uint64_t(t) + threadIdx.x);
    __syncthreads();
    count(t, begin, end);
    __syncthreads();
    uint32_t next_t = t + t_step, next_piece = piece + piece_step;
    if (next_t >= items.k) {
      next_t -= items.k;
      ++next_piece;
    }
    if (next_piece >= items.pieces || next_t != t) flush(t);
    __syncthreads();
    t = next_t;
    piece = next_piece;
  }
}

// The first lane of a run of adjacent lanes that hold the same key gets the run's length, the
// others 0. Brain images put long runs of neighbouring voxels in the background pair, so this
// groups nearly what __match_any_sync did (equal keys that are not neighbours now add apart),
// for a shuffle and a vote: MATCH.ANY cost ~29 us of an evaluation at 1 mm, 256^2 bins, k = 64
// on an H100 (uniform data, where it groups nothing: 101.6 -> 72.8 us; README).
__device__ __forceinline__ unsigned run_length_at_head(int key, unsigned lane) {
  const int before = __shfl_up_sync(0xffffffffu, key, 1);
  const bool head = lane == 0u || before != key;
  const unsigned heads = __ballot_sync(0xffffffffu, head);
  if (!head) return 0u;
  const unsigned later = heads & ~((2u << lane) - 1u);  // heads after this lane (none for lane 31)
  return (later != 0u ? unsigned(__ffs(int(later)) - 1) : 32u) - lane;
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
// one compare, the same for both halves (lanes adding to low and high halves do not diverge).
__device__ __forceinline__ void add_narrow(unsigned* hist, unsigned* joint, int bin, unsigned count) {
  unsigned* word = hist + bin / 2;
  const unsigned shift = unsigned(bin & 1) * 16u;
  const unsigned old = atomicAdd(word, count << shift);
  if (((old >> shift) & 0xffffu) + count <= 0xffffu) return;
  atomicAdd(joint + bin, 0x10000u);
  if (bin & 1) return;  // the high counter's wrap left the word: nothing to take back
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
// kUnroll 2): 56-64 registers under __maxnreg__(64), 40 under 40, no spills but one word
// outside the step loop (wide, quads, 40); 96 bytes of static shared memory (the map). The
// traversal: for_each_item.
template <bool Narrow, Sampling S, int kUnroll, int kRegisters>
__global__ void __maxnreg__(kRegisters) privatised_kernel(MiArgs a, GridDiv d, Items items, int vectors) {
  extern __shared__ uint4 hist4[];
  __shared__ double2 map[6];  // the transform's, read_map's
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
      constexpr bool kPerSample = kRegisters < 64;
      StepMap m;
      if (!kPerSample) m = read_map<false>(map);
      int bin[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const uint32_t i = base + uint32_t(u) * blockDim.x + threadIdx.x;
        if (kPerSample) m = read_map<true>(map);
        bin[u] = joint_bin_of<S>(a, d, m.m, i < end ? i : begin, i < end);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const unsigned count = run_length_at_head(bin[u], lane);
        if (bin[u] < 0 || count == 0u) continue;
        if (Narrow)
          add_narrow(hist, joint, bin[u], count);
        else
          atomicAdd(hist + bin[u], count);
      }
    }
  };
  for_each_item(reinterpret_cast<double*>(map), a.maps, items, count_piece,
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
// for_each_item, as privatised_kernel's.
// ptxas (sm_90, CUDA 13.0): 56 registers under __maxnreg__(64), 40 under 40, no spills; 96
// bytes of static shared memory (the map).
template <int kRegisters>
__global__ void __maxnreg__(kRegisters) privatised_pv_kernel(MiArgs a, GridDiv d, Items items, int vectors) {
  extern __shared__ uint4 hist4[];
  __shared__ double2 map[6];  // the transform's, read_map's
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
      const StepMap m = read_map<(kRegisters < 64)>(map);
      const bool inside = moving_position(a, d, m.m, index, i < end, px, py, pz);
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
      const unsigned count = run_length_at_head(key, lane);
      if (key >= 0) {
        if (count != 0u) add_wide(hist, joint, key, count << regpipe_common::kPartialVolumeFractionBits);
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
  for_each_item(reinterpret_cast<double*>(map), a.maps, items, count_piece,
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

using Kernel = void (*)(MiArgs, GridDiv, Items, int);

// How many equal pieces each transform's voxels are cut into (for_each_item): the k * pieces
// items run in rounds of `at_once` blocks (one wave), and an item costs its samples plus one
// zeroing and flush of the histogram, taken as `smallest` samples (8 steps of a block), which
// is also the fewest samples a piece gets. The count with the least rounds x item time: at
// k = 64 on 132 SMs, 2 (128 blocks, one item each); at k = 1, 132.
uint32_t pieces_per_transform(uint32_t voxels, std::size_t k, uint64_t at_once, uint64_t smallest) {
  uint32_t pieces = 1;
  double best = 0.0;
  for (uint64_t p = 1; p <= at_once && (p == 1 || voxels / p >= smallest); ++p) {
    const uint64_t rounds = (uint64_t(k) * p + at_once - 1) / at_once;
    const double time = double(rounds) * (double(voxels) / double(p) + double(smallest));
    if (p == 1 || time < best) {
      best = time;
      pieces = uint32_t(p);
    }
  }
  return pieces;
}

template <int kRegisters>
Kernel pick(bool is_narrow, Sampling sampling) {
  switch (sampling) {
    case Sampling::kNearest:
      return is_narrow ? privatised_kernel<true, Sampling::kNearest, kUnroll, kRegisters>
                       : privatised_kernel<false, Sampling::kNearest, kUnroll, kRegisters>;
    case Sampling::kQuads:
      return is_narrow ? privatised_kernel<true, Sampling::kQuads, kUnroll, kRegisters>
                       : privatised_kernel<false, Sampling::kQuads, kUnroll, kRegisters>;
    default:
      return is_narrow ? privatised_kernel<true, Sampling::kTrilinear, kUnroll, kRegisters>
                       : privatised_kernel<false, Sampling::kTrilinear, kUnroll, kRegisters>;
  }
}

// A launch's kernel, block size and resident blocks an SM: they depend only on the instance's
// settings (bins, interpolation, partial_volume, threads_per_block, device) and on whether the
// call reads the quads, so an instance works them out once (six occupancy queries and an
// attribute set, several microseconds of a call of one transform). So is the last call's
// partition (pieces_per_transform's search: up to a wave of candidates a call).
struct LaunchPlan {
  Kernel kernel = nullptr;
  std::size_t bytes = 0;  // dynamic shared memory
  int threads = 0, resident = 0, unroll = 1;
  uint32_t voxels = 0;  // the partition of the last call, of k transforms of `voxels` voxels
  std::size_t k = 0;
  uint32_t pieces = 0;
};

LaunchPlan plan_launch(const SchemeLaunch& l, Sampling sampling) {
  const bool pv = l.args.joint_pv != nullptr;
  const bool is_narrow = !pv && narrow(l.args.bins, l.shared_per_block);
  LaunchPlan p;
  p.bytes = pv ? privatised_pv_shared_bytes(l.args.bins, l.threads_per_block, l.shared_per_block)
               : privatised_shared_bytes(l.args.bins, l.threads_per_block, l.shared_per_block);
  if (p.bytes == 0)
    throw rp::Error(RP_INTERNAL, "privatised: bins=" + std::to_string(l.args.bins) +
                                     " does not fit in shared memory (create should have refused it)");
  // Registers: 40 a thread (1536 threads an SM) when an SM holds two or more histograms, 64
  // when it holds one (256 x 256 bins): its block has at most 1024 threads whatever their
  // registers, so they go to keeping the samples' values in flight. Measured on an H100
  // (README): 40 is ~15% faster than 64 at k=1 up to 128 x 128 bins, and 5% slower at 256 x 256.
  // partial_volume: the same rule, not tuned separately (ptxas: 56 registers under 64, 40 under
  // 40, no spills either way).
  int by_shared = 0;
  const Kernel small = pv ? privatised_pv_kernel<40> : pick<40>(is_narrow, sampling);
  const Kernel large = pv ? privatised_pv_kernel<64> : pick<64>(is_narrow, sampling);
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&by_shared, small, 32, p.bytes));
  p.kernel = by_shared >= 2 ? small : large;
  p.unroll = pv ? 1 : kUnroll;
  RP_CUDA_CHECK(cudaFuncSetAttribute(p.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.bytes)));
  // The block size that lets an SM run the most threads (registers and histograms decide):
  // threads_per_block or a multiple of it; 256 x 256 bins: one block of 1024 threads.
  int best = 0;
  p.threads = l.threads_per_block;
  for (int t = l.threads_per_block; t <= 1024; t += l.threads_per_block) {
    int blocks = 0;
    RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, p.kernel, t, p.bytes));
    if (blocks * t > best) {
      best = blocks * t;
      p.threads = t;
      p.resident = blocks;
    }
  }
  if (p.resident < 1)
    throw rp::Error(RP_DEVICE, "privatised: no block of " + std::to_string(l.threads_per_block) + " threads with " +
                                   std::to_string(p.bytes) + " bytes of shared memory fits on the device");
  return p;
}

// An instance's plans, one a sampling (its settings fix the rest), made on first use.
class PrivatisedState : public SchemeState {
 public:
  bool built_from_reference_bins() const override { return false; }
  LaunchPlan& plan(const SchemeLaunch& l, Sampling sampling) {
    LaunchPlan& p = plans_[std::size_t(sampling)];
    if (p.kernel == nullptr) p = plan_launch(l, sampling);
    return p;
  }

 private:
  std::array<LaunchPlan, 3> plans_;
};

}  // namespace

std::unique_ptr<SchemeState> make_privatised_state(const SchemeOptions&) { return std::make_unique<PrivatisedState>(); }

void run_privatised(const SchemeLaunch& l) {
  if (l.k > std::size_t(UINT32_MAX))  // Items::k
    throw rp::Error(RP_INVALID_ARGUMENT, "privatised evaluates at most " + std::to_string(UINT32_MAX) +
                                             " transforms a call");
  const Sampling sampling = l.args.nearest != 0          ? Sampling::kNearest
                            : l.args.mov_quads != nullptr ? Sampling::kQuads
                                                          : Sampling::kTrilinear;
  if (l.state == nullptr) throw rp::Error(RP_INTERNAL, "privatised: launched without make_privatised_state's state");
  LaunchPlan& p = static_cast<PrivatisedState*>(l.state)->plan(l, sampling);
  const uint64_t at_once = uint64_t(p.resident) * uint64_t(l.sm_count);
  if (p.pieces == 0 || p.voxels != l.voxel_count || p.k != l.k) {
    p.pieces = pieces_per_transform(l.voxel_count, l.k, at_once, uint64_t(8 * p.unroll * p.threads));
    p.voxels = l.voxel_count;
    p.k = l.k;
  }
  const Items items{uint32_t(l.k), p.pieces, l.voxel_count / p.pieces, l.voxel_count % p.pieces};
  const uint64_t blocks = std::min<uint64_t>(at_once, uint64_t(l.k) * p.pieces);
  const GridDiv d{FastDiv(uint32_t(l.args.ref_grid.nx) * uint32_t(l.args.ref_grid.ny)),
                  FastDiv(uint32_t(l.args.ref_grid.nx))};
  p.kernel<<<unsigned(blocks), p.threads, p.bytes, l.stream>>>(l.args, d, items, int(p.bytes / sizeof(uint4)));
  RP_CUDA_CHECK_LAUNCH(l.args.joint_pv != nullptr ? "privatised_pv_kernel" : "privatised_kernel");
}

}  // namespace regpipe::cost_mi_cuda
