// fused (ours). What makes it faster than Li & Kumar's five schemes on Hopper (README.md):
// - one launch for all k transforms of a call (grid.x = transform, grid.y = span range; a
//   small call's maps in its parameters, so nothing is copied before it), which
//   also finishes the evaluation: the last block of each transform to finish computes the cost
//   (threadfence + atomic ticket, as CUB's single-pass reductions), writes it to the caller's
//   page-locked memory, raises the call's signal there (the host spins on it rather than
//   synchronising the stream: regpipe_common_cuda::CallSignal) and zeroes the sums for the next
//   call (no memset, no copy back). Blocks
//   are dispatched transform-fastest, so the blocks running together share a span range and
//   read its neighbourhood of the moving image from L2 (fetched from memory once a batch);
// - warps walk "spans", runs of weighted reference voxels along x made once per reference:
//   coalesced 2-byte bin loads, no index division, the row part of the voxel map computed
//   once per span, and reference voxels of weight 0 never visited; of a span only the 64-voxel
//   steps that can map inside the moving image (steps_inside). A block owns a contiguous
//   range of spans and its warps take neighbouring rows, so the trilinear neighbours of a
//   row's samples, shared with the next rows, come from the SM's L1;
// - the moving image as trilinear quads (regpipe_common_cuda::TrilinearQuads): two 16-byte
//   loads a sample instead of eight 4-byte ones, contiguous across a warp (lanes take voxels j
//   and j + 32),
//   for batches and for images whose quads fit in L2; the plain floats otherwise. Both give
//   the same values. Loads are unconditional (positions outside the moving image are clamped
//   to its first voxel and weighted 0) so that a lane's two samples overlap their latency;
// - the most populated bin (the background: 44% of chris_t1, up to 77% of a head in Li &
//   Kumar's Table IV) is summed in registers;
// - every other sample goes to a per-block shared histogram in 32-bit fixed point, each value
//   added as its low 16 bits and the rest to two 32-bit words by native reductions (no return
//   value to wait for, no float atomics, whose compare-and-swap loops (sm_90 has no float add on
//   shared memory) replay once per colliding lane, no per-warp grouping);
// - blocks add their histograms to global memory as 64-bit integers (native atomics).
// Deterministic: integer sums do not depend on their order and every float sum (a lane's
// background-bin partials) has a fixed order given the partition of the spans, which depends
// only on the reference and the device: costs repeat bit for bit and do not depend on k.
// Exactness: each sample's w, w y and w y^2 are float products (as in every scheme) rounded
// once to a multiple of 2^-30 of their largest possible value; the integer sums are exact.
#include "../kernels/cr_finish.cuh"
#include "../kernels/cr_sample.cuh"
#include "schemes.hpp"

#include <regpipe_common/row_bracket.hpp>

#include <regpipe_common_cuda/device_binning.hpp>
#include <regpipe_common_cuda/kernel_loading.hpp>
#include <regpipe_common_cuda/trilinear_32.cuh>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <vector>

namespace regpipe::cost_cr_cuda {
namespace {

using regpipe_common_cuda::trilinear_32;
using regpipe_common_cuda::trilinear_quads;

// A block's histogram entry is a pair of 32-bit words {low, high} summing a sample's 32-bit
// fixed-point value q (|q| < 2^31) as its low 16 bits and the rest: both adds are native
// reductions without a return value (no carry to detect, nothing to wait for), exact while a
// block adds at most kMaxBlockSamples samples to an entry (the low word stays below 2^32).
__device__ __forceinline__ void add_split(unsigned* words, int q) {
  atomicAdd(words, unsigned(q) & 0xffffu);
  atomicAdd(reinterpret_cast<int*>(words) + 1, q >> 16);
}

__device__ __forceinline__ long long read_split(const unsigned* words) {
  return static_cast<long long>(static_cast<int>(words[1])) * 65536 + static_cast<long long>(words[0]);
}

// One sample: weight (0 when it does not count), moving value minus the mean, and its overlap
// weight w_ref * w_mov (0 outside).
struct FusedSample {
  float w, y, overlap;
};

// Samples span voxel `j` (in span order `index`) at reference x, as sample_voxel and cpu.cr
// do, with every load unconditional so that the caller's two samples overlap their latency.
template <bool kPlain, bool kQuads>
__device__ __forceinline__ FusedSample sample_span_voxel(const CrArgs& a, const FusedLayout& r, const double* map,
                                                         double rx, double ry, double rz, int x, int index,
                                                         bool in_span) {
  // The CPU sums m0 x + m1 y + m2 z + m3 left to right; rx holds m1 y + m2 z + m3, so the
  // double position can differ in its last bit, which moves the float position only on a
  // rounding tie.
  float px = float(fma(map[0], double(x), rx)), py = float(fma(map[4], double(x), ry)),
        pz = float(fma(map[8], double(x), rz));
  // regpipe_common::inside's six comparisons, evaluated together rather than short-circuited
  // (branches and per-sample int-to-float conversions of the bounds, ~20 instructions).
  const bool inside = in_span & (px >= 0.f) & (py >= 0.f) & (pz >= 0.f) & (px <= a.mov_last.x) &
                      (py <= a.mov_last.y) & (pz <= a.mov_last.z);
  if (!inside) px = py = pz = 0.f;  // a valid place to load from; the sample weighs 0
  const float value = a.nearest ? regpipe_common::nearest(a.mov, a.mov_grid, px, py, pz)
                                : (kQuads ? trilinear_quads(a.mov_quads, a.mov_grid, px, py, pz)
                                          : trilinear_32(a.mov, a.mov_grid, px, py, pz));
  FusedSample s{0.f, value - a.mov_shift, 0.f};
  if (kPlain) {
    s.w = s.overlap = inside ? 1.f : 0.f;
  } else {
    // As sample_voxel and cpu.cr: w_ref * w_mov * border, in double, rounded once.
    const float w_ref = r.ref_weight != nullptr && in_span ? r.ref_weight[index] : 1.f;
    const float w_mov = a.mov_weight != nullptr ? trilinear_32(a.mov_weight, a.mov_grid, px, py, pz) : 1.f;
    s.overlap = inside ? float(double(w_ref) * double(w_mov)) : 0.f;
    s.w = inside ? float(double(w_ref) * double(w_mov) * a.border(px, py, pz)) : 0.f;
  }
  return s;
}

// Block histogram entries: sum c of bin b at 3 b + c (the global layout), two 32-bit words
// each (add_split). In the plain kernel the w entries count samples (every weight is 1) and
// are scaled when the block merges.
struct BlockHistogram {
  unsigned* words;
  __device__ unsigned* entry(int e) const { return words + 2 * e; }
};

// Accumulators of one lane: the background bin in registers (float, a lane's samples in
// order), the overlap likewise (weighted kernels: in the plain ones every sample inside counts
// with weight 1, so the overlap is the total weight, taken at the finish).
struct LaneSums {
  float hot_w = 0.f, hot_wy = 0.f, hot_wyy = 0.f, overlap = 0.f;
};

// A sample's contribution outside the background bin, in 32-bit fixed point (plain: w is a
// count): each product rounded once to a multiple of 2^-30 of its largest possible value.
struct FixedSample {
  int w, wy, wyy;
};

template <bool kPlain>
__device__ __forceinline__ FixedSample to_fixed(float w, float wy, float wyy, const FixedPointScales& scale) {
  return {kPlain ? 1 : __float2int_rn(w * scale.w_f), __float2int_rn(wy * scale.wy_f),
          __float2int_rn(wyy * scale.wyy_f)};
}

template <bool kPlain>
__device__ __forceinline__ void add_to_histogram(const BlockHistogram& h, int bin, const FixedSample& q) {
  unsigned* e = h.entry(kSumsPerBin * bin);
  if (kPlain) atomicAdd(e, 1u);  // a count
  else add_split(e, q.w);
  add_split(e + 2, q.wy);
  add_split(e + 4, q.wyy);
}

// Adds a sample: to the lane's registers in the background bin, else to the block histogram.
template <bool kPlain>
__device__ __forceinline__ void accumulate(const FusedSample& s, int bin, int hot_bin, const FixedPointScales& scale,
                                           const BlockHistogram& h, LaneSums& lane) {
  if (!kPlain) lane.overlap += s.overlap;
  if (!(s.w > 0.f)) return;
  const float wy = kPlain ? s.y : s.w * s.y, wyy = wy * s.y;  // plain: w is 1
  if (bin == hot_bin) {
    lane.hot_w += s.w;
    lane.hot_wy += wy;
    lane.hot_wyy += wyy;
  } else {
    add_to_histogram<kPlain>(h, bin, to_fixed<kPlain>(s.w, wy, wyy, scale));
  }
}

// The maps of a call of at most kFusedInlineMaps transforms, passed in the launch parameters
// (SchemeLaunch::host_maps).
struct InlineMaps {
  double m[12 * kFusedInlineMaps];
};

// The 64-voxel steps [begin, end) of a span (offsets from its first voxel, begin a multiple of
// 64) that hold every voxel mapping inside the moving image: the x bracket of the span's row
// (regpipe_common::row_bracket.hpp, shared with cpu.cr's row spans; each axis's bracket made
// once per block). A reference larger than the moving image (chris_t1 under chris_PD's slab)
// skips its rows that map outside without sampling them.
__device__ __forceinline__ void steps_inside(const CrArgs& a, const int4& span, double rx, double ry, double rz,
                                             const regpipe_common::AxisBracket* bracket, int& begin, int& end) {
  double lo = double(span.y), hi = double(span.y + span.z - 1);
  regpipe_common::narrow_to_axis(bracket[0], rx, double(a.mov_last.x), lo, hi);
  regpipe_common::narrow_to_axis(bracket[1], ry, double(a.mov_last.y), lo, hi);
  regpipe_common::narrow_to_axis(bracket[2], rz, double(a.mov_last.z), lo, hi);
  if (lo > hi) return;
  begin = (int(lo) - span.y) & ~63;
  end = int(hi) - span.y + 1;
}

// kPlain: no weight images and no fuzzy border, so every sample inside weighs exactly 1 (the
// common case, compiled without the weighting code). At most 48 registers: the kernel waits
// on its gathers (ncu on an H100: 44% of stalls on L1TEX), so warps matter more than
// registers; 48 lets 5 blocks of 256 threads share an SM (4 at the 56 ptxas would take)
// with no spills in the plain kernel (the weighted one spills ~60 bytes), and still allows
// 1024 threads a block.
template <bool kPlain, bool kQuads>
__global__ void __maxnreg__(48) fused_kernel(CrArgs a, FusedLayout r, FixedPointScales scale, unsigned* tickets,
                                             const __grid_constant__ InlineMaps inline_maps) {
  extern __shared__ unsigned block_words[];  // 3 bins two-word entries
  // The warps' sums of the background bin and the overlap (w, w y, w y^2, overlap), in the
  // units of the entries (plain: counts for w and the overlap).
  __shared__ unsigned long long warp_totals[4];
  __shared__ double map[12];
  __shared__ regpipe_common::AxisBracket bracket[3];
  __shared__ bool last_block;
  const int bins = a.bins;
  const int entries = kSumsPerBin * bins;
  const BlockHistogram h{block_words};
  for (int i = int(threadIdx.x); i < 2 * entries; i += int(blockDim.x)) block_words[i] = 0u;
  if (threadIdx.x < 4) warp_totals[threadIdx.x] = 0ull;
  const int t = int(blockIdx.x);
  // The map once per block, not once per span.
  const auto map_entry = [&](int i) { return a.maps != nullptr ? a.maps[12 * t + i] : inline_maps.m[12 * t + i]; };
  if (threadIdx.x < 12) map[threadIdx.x] = map_entry(int(threadIdx.x));
  if (threadIdx.x >= 12 && threadIdx.x < 15) {
    const int axis = int(threadIdx.x) - 12;
    const float last = axis == 0 ? a.mov_last.x : (axis == 1 ? a.mov_last.y : a.mov_last.z);
    bracket[axis] = regpipe_common::axis_bracket(map_entry(4 * axis), double(last), a.ref_grid.nx);
  }
  const int warps = int(blockDim.x / 32), warp = int(threadIdx.x / 32), lane_id = int(threadIdx.x % 32);
  // This block's contiguous share of the spans; its warps take neighbouring spans.
  const uint32_t first_span = uint32_t(uint64_t(blockIdx.y) * r.span_count / gridDim.y);
  const uint32_t end_span = uint32_t(uint64_t(blockIdx.y + 1) * r.span_count / gridDim.y);
  __syncthreads();

  // Each warp's spans; only the 64-voxel steps that can sample inside the moving image
  // (steps_inside). Each step keeps its place in the span, so a lane samples the voxels it would
  // without the bracket and every sum keeps its bits.
  LaneSums lane;
  for (uint32_t i = first_span + uint32_t(warp); i < end_span; i += uint32_t(warps)) {
    const int4 span = r.spans[i];
    const int y = span.w % a.ref_grid.ny, z = span.w / a.ref_grid.ny;
    const double rx = map[1] * y + map[2] * z + map[3];
    const double ry = map[5] * y + map[6] * z + map[7];
    const double rz = map[9] * y + map[10] * z + map[11];
    int begin = 0, end = 0;
    steps_inside(a, span, rx, ry, rz, bracket, begin, end);
    for (int first = begin; first < end; first += 64) {  // the same trip count for the whole warp
      const int j = first + lane_id;  // this lane's two voxels: j, j + 32
      const bool in0 = j < span.z, in1 = j + 32 < span.z;
      const int bin[2] = {in0 ? int(r.bins[span.x + j]) : 0, in1 ? int(r.bins[span.x + j + 32]) : 0};
      const FusedSample s[2] = {
          sample_span_voxel<kPlain, kQuads>(a, r, map, rx, ry, rz, span.y + j, span.x + j, in0),
          sample_span_voxel<kPlain, kQuads>(a, r, map, rx, ry, rz, span.y + j + 32, span.x + j + 32, in1)};
      accumulate<kPlain>(s[0], bin[0], r.hot_bin, scale, h, lane);
      accumulate<kPlain>(s[1], bin[1], r.hot_bin, scale, h, lane);
    }
  }
  // The lanes' register sums, in fixed point (plain: w and overlap are counts, exact in float
  // below 2^24), summed over the warp as integers, then over the block's warps.
  long long total[4] = {
      kPlain ? static_cast<long long>(lane.hot_w) : __double2ll_rn(double(lane.hot_w) * scale.w),
      __double2ll_rn(double(lane.hot_wy) * scale.wy), __double2ll_rn(double(lane.hot_wyy) * scale.wyy),
      kPlain ? 0ll : __double2ll_rn(double(lane.overlap) * scale.overlap)};
  for (int c = 0; c < 4; ++c) {
    for (int offset = 16; offset > 0; offset /= 2) total[c] += __shfl_xor_sync(0xffffffffu, total[c], offset);
    if (lane_id == 0 && total[c] != 0) atomicAdd(&warp_totals[c], static_cast<unsigned long long>(total[c]));
  }
  __syncthreads();

  // Block merge: one native 64-bit integer atomic per non-zero entry. Results layout
  // (cuda_cr_cost.cu): sums[t][3 b + c]; overlap[t].
  auto* sums = reinterpret_cast<unsigned long long*>(a.sums) + std::size_t(t) * kSumsPerBin * bins;
  auto* overlap = reinterpret_cast<unsigned long long*>(a.overlap) + t;
  for (int e = int(threadIdx.x); e <= entries; e += int(blockDim.x)) {
    const bool is_overlap = e == entries;
    long long v = is_overlap ? static_cast<long long>(warp_totals[3]) : read_split(h.entry(e));
    if (!is_overlap && e / kSumsPerBin == r.hot_bin) v += static_cast<long long>(warp_totals[e % kSumsPerBin]);
    if (v == 0) continue;
    if (kPlain && !is_overlap && e % kSumsPerBin == 0) v *= scale.w_one;  // a count (plain: no overlap sums)
    atomicAdd(is_overlap ? overlap : sums + e, static_cast<unsigned long long>(v));
  }

  // The last block of transform t to get here finishes it.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(tickets + t, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  const auto* fixed = reinterpret_cast<const long long*>(sums);
  const double total_overlap = double(__ldcg(reinterpret_cast<const long long*>(overlap))) / scale.overlap;
  finish_transform(
      a, t, total_overlap,
      [&](int i) {
        const int c = i % kSumsPerBin;
        return double(__ldcg(fixed + i)) / (c == 0 ? scale.w : (c == 1 ? scale.wy : scale.wyy));
      },
      [&] {
        for (int i = int(threadIdx.x); i < kSumsPerBin * bins; i += int(blockDim.x)) sums[i] = 0ull;
        if (threadIdx.x == 0) {
          *overlap = 0ull;
          tickets[t] = 0u;
        }
      },
      kPlain);
}

template <bool kPlain, bool kQuads>
int resident_blocks(int threads_per_block, std::size_t shared) {
  int blocks = 0;
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fused_kernel<kPlain, kQuads>, threads_per_block,
                                                              shared));
  if (blocks < 1)
    throw rp::Error(RP_DEVICE, "fused: a block of " + std::to_string(threads_per_block) + " threads with " +
                                   std::to_string(shared) + " bytes of shared memory does not fit on the device");
  return blocks;
}

// Resident blocks of both readers of the moving image: the partition of the spans, and with
// it the bits of a cost, must not depend on the reader a call's batch size selects.
template <bool kPlain>
int resident_blocks_of_both_readers(int threads_per_block, std::size_t shared) {
  return std::min(resident_blocks<kPlain, false>(threads_per_block, shared),
                  resident_blocks<kPlain, true>(threads_per_block, shared));
}

template <bool kPlain, bool kQuads>
void launch_fused(dim3 grid, const SchemeLaunch& l, std::size_t shared) {
  InlineMaps maps{};
  if (l.host_maps != nullptr) std::copy(l.host_maps, l.host_maps + 12 * l.k, maps.m);
  fused_kernel<kPlain, kQuads><<<grid, l.threads_per_block, shared, l.stream>>>(l.args, l.layouts->fused, l.fixed,
                                                                                 l.tickets, maps);
  RP_CUDA_CHECK_LAUNCH("fused_kernel");
}

// Copies a host array to a device buffer, growing it as needed.
template <class Device, class Host>
void upload_array(const std::vector<Host>& host, DeviceBuffer<Device>& device, cudaStream_t stream) {
  static_assert(sizeof(Device) == sizeof(Host), "the host and device layouts must match");
  device.ensure(host.size());
  if (!host.empty())
    RP_CUDA_CHECK(cudaMemcpyAsync(device.get(), host.data(), host.size() * sizeof(Host), cudaMemcpyHostToDevice,
                                  stream));
}

// The layout's span-independent part and its block bounds, given the spans in `buffers`.
void finish_fused_layout(const FusedBuffers& buffers, uint32_t span_count, std::size_t span_voxels,
                         uint32_t longest_span, bool weighted, int hot_bin, int threads_per_block, int bins,
                         FusedLayout& layout) {
  layout = FusedLayout{};
  layout.spans = buffers.spans.get();
  layout.span_count = span_count;
  layout.span_voxels = span_voxels;
  layout.bins = buffers.bins.get();
  layout.ref_weight = weighted ? buffers.ref_weight.get() : nullptr;
  layout.hot_bin = hot_bin;
  // Enough blocks that none adds more than kMaxBlockSamples samples to its histogram (spans
  // are at most that long: set_reference checks the rows).
  const std::size_t spans_per_block = kMaxBlockSamples / std::max<uint32_t>(1, longest_span);
  layout.fewest_blocks = std::max<std::size_t>(1, (std::size_t(span_count) + spans_per_block - 1) / spans_per_block);
  if (layout.fewest_blocks > kMaxGridY)
    throw rp::Error(RP_UNSUPPORTED, "fused: this reference's spans need " + std::to_string(layout.fewest_blocks) +
                                        " blocks a transform, more than a launch's " + std::to_string(kMaxGridY) +
                                        "; use scheme5 or cpu.cr");
  const std::size_t shared = fused_histogram_bytes(bins);
  layout.blocks_per_sm[0] = resident_blocks_of_both_readers<false>(threads_per_block, shared);
  layout.blocks_per_sm[1] = resident_blocks_of_both_readers<true>(threads_per_block, shared);
}

// Span r of an unweighted reference: its whole row r (every voxel weighs 1).
__global__ void row_spans_kernel(int nx, uint32_t rows, int4* spans) {
  for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x)
    spans[r] = make_int4(int(r) * nx, 0, nx, int(r));
}

}  // namespace

void load_fused_kernels() {
  regpipe_common_cuda::load_kernels({reinterpret_cast<const void*>(fused_kernel<true, true>),
                                     reinterpret_cast<const void*>(fused_kernel<true, false>),
                                     reinterpret_cast<const void*>(fused_kernel<false, true>),
                                     reinterpret_cast<const void*>(fused_kernel<false, false>),
                                     reinterpret_cast<const void*>(row_spans_kernel)});
}

void prepare_fused(const ReferenceSpans& spans, int threads_per_block, int bins, cudaStream_t stream,
                   FusedBuffers& buffers, FusedLayout& layout) {
  static_assert(offsetof(Span, first) == offsetof(int4, x) && offsetof(Span, x) == offsetof(int4, y) &&
                    offsetof(Span, length) == offsetof(int4, z) && offsetof(Span, row) == offsetof(int4, w),
                "Span must have int4's layout");
  upload_array(spans.spans, buffers.spans, stream);
  upload_array(spans.bins, buffers.bins, stream);
  if (!spans.weights.empty()) upload_array(spans.weights, buffers.ref_weight, stream);
  uint32_t longest = 1;
  std::size_t voxels = 0;
  for (const Span& span : spans.spans) {
    longest = std::max(longest, uint32_t(span.length));
    voxels += std::size_t(span.length);
  }
  finish_fused_layout(buffers, uint32_t(spans.spans.size()), voxels, longest, !spans.weights.empty(), spans.hot_bin,
                      threads_per_block, bins, layout);
}

void prepare_fused_from_device(const float* values, const regpipe_common::Grid& grid,
                               const regpipe_common::IntensityBinning& binning, int threads_per_block,
                               cudaStream_t stream, FusedBuffers& buffers, FusedLayout& layout) {
  const std::size_t voxels = regpipe_common::voxel_count(grid);
  const uint32_t rows = uint32_t(std::size_t(grid.ny) * std::size_t(grid.nz));
  buffers.spans.ensure(rows);
  row_spans_kernel<<<std::min<unsigned>((rows + 255) / 256, 4096), 256, 0, stream>>>(grid.nx, rows,
                                                                                      buffers.spans.get());
  RP_CUDA_CHECK_LAUNCH("row_spans_kernel");
  buffers.bins.ensure(voxels);
  regpipe_common_cuda::launch_bin_voxels(values, voxels, binning, buffers.bins.get(), stream);
  // The hot bin as make_reference_spans picks it: the first of the most populated.
  buffers.population.ensure(std::size_t(binning.bins));
  RP_CUDA_CHECK(cudaMemsetAsync(buffers.population.get(), 0, std::size_t(binning.bins) * sizeof(unsigned long long),
                                stream));
  regpipe_common_cuda::launch_count_bins(buffers.bins.get(), voxels, binning.bins, buffers.population.get(), stream);
  std::vector<unsigned long long> population(std::size_t(binning.bins));
  RP_CUDA_CHECK(cudaMemcpyAsync(population.data(), buffers.population.get(),
                                population.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  RP_CUDA_CHECK(cudaStreamSynchronize(stream));
  const int hot_bin = int(std::max_element(population.begin(), population.end()) - population.begin());
  finish_fused_layout(buffers, rows, voxels, uint32_t(grid.nx), false, hot_bin, threads_per_block, binning.bins,
                      layout);
}

void run_fused(const SchemeLaunch& l) {
  const FusedLayout& r = l.layouts->fused;
  const bool plain = l.unit_weights;
  // Per transform: one wave of resident blocks, or one block per kBlockSamples voxels of spans
  // when the reference has fewer; at least one block, which finishes the transform even
  // without spans. A block's fixed work (clearing its histogram, merging it, the finish's
  // ticket) is worth a few thousand samples: FLIRT's 8 and 4 mm searches, batches of 3-64
  // transforms on levels of 10-160 k voxels, ran 1.4-1.5x faster at k = 32 than with a span per
  // warp (~300 samples a block), and single transforms at most 15 % slower
  // (bench/results/cost_cr.md). Independent of k, so a transform's sums do not depend on the
  // batch it came in.
  constexpr std::size_t kBlockSamples = 1280;
  const std::size_t by_work = std::max<std::size_t>(1, (r.span_voxels + kBlockSamples - 1) / kBlockSamples);
  const std::size_t resident = std::size_t(r.blocks_per_sm[plain ? 1 : 0]) * std::size_t(l.sm_count);
  const std::size_t chosen = l.blocks > 0 ? std::size_t(l.blocks) : std::min(by_work, resident);
  const unsigned blocks = unsigned(std::max(chosen, r.fewest_blocks));
  const std::size_t shared = fused_histogram_bytes(l.args.bins);
  const bool quads = l.args.mov_quads != nullptr;  // TrilinearQuads::for_call
  if (l.k > std::size_t(INT_MAX))  // grid.x
    throw rp::Error(RP_INVALID_ARGUMENT, "fused evaluates at most " + std::to_string(INT_MAX) + " transforms a call");
  const dim3 grid(unsigned(l.k), blocks);
  if (plain && quads) launch_fused<true, true>(grid, l, shared);
  else if (plain) launch_fused<true, false>(grid, l, shared);
  else if (quads) launch_fused<false, true>(grid, l, shared);
  else launch_fused<false, false>(grid, l, shared);
}

}  // namespace regpipe::cost_cr_cuda
