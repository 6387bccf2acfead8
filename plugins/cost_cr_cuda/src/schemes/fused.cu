// fused (ours). What makes it faster than Li & Kumar's five schemes on Hopper (README.md):
// - one launch for all k transforms of a call (grid.y = transform), which also finishes the
//   evaluation: the last block of each transform to finish computes the cost (threadfence +
//   atomic ticket, as CUB's single-pass reductions), writes it to the caller's page-locked
//   memory and zeroes the sums for the next call (no memset, no copy back);
// - warps walk "spans", runs of weighted reference voxels along x made once per reference:
//   coalesced 2-byte bin loads, no index division, the row part of the voxel map computed
//   once per span, and reference voxels of weight 0 never visited. A block owns a contiguous
//   range of spans and its warps take neighbouring rows, so the eight trilinear neighbours
//   of a row's samples, shared with the next rows, come from the SM's L1;
// - each lane samples two neighbouring voxels per step with unconditional loads (positions
//   outside the moving image are clamped to its first voxel and weighted 0): 16 independent
//   loads in flight per lane hide the memory latency, and when both fall in the same bin
//   (common along x) they are added together before the atomics;
// - the most populated bin (the background: 44% of chris_t1, up to 77% of a head in Li &
//   Kumar's Table IV) is summed in registers;
// - every other sample goes to a per-block shared histogram of 64-bit integers (fixed point)
//   with native 32-bit integer atomics (low word, then the high word plus the low word's
//   carry): no float atomics, whose compare-and-swap loops (sm_90 has no float add on shared
//   memory) replay once per colliding lane, and no per-warp grouping;
// - blocks add their histograms to global memory as 64-bit integers (native atomics).
// Deterministic: integer sums do not depend on their order and every float sum (a lane's
// background-bin partials) has a fixed order given the partition of the spans, which depends
// only on the reference and the device: costs repeat bit for bit and do not depend on k.
// Exactness: each sample's w, w y and w y^2 are float products (as in every scheme) rounded
// once to a multiple of 2^-61 of the largest possible total; the integer sums are exact.
#include "../kernels/cr_finish.cuh"
#include "../kernels/cr_sample.cuh"
#include "schemes.hpp"

#include <algorithm>
#include <cstddef>

namespace regpipe::cost_cr_cuda {
namespace {

// regpipe_common::trilinear with 32-bit offsets (the moving image has < 2^31 voxels,
// checked in set_moving): the same neighbour clamps and the same arithmetic, so the same
// value; the shared helper's 64-bit offsets cost ~40 instructions a sample on the GPU.
__device__ __forceinline__ float trilinear_32(const float* __restrict__ data, const regpipe_common::Grid& g,
                                              float x, float y, float z) {
  const int x0 = int(x), y0 = int(y), z0 = int(z);
  const float fx = x - float(x0), fy = y - float(y0), fz = z - float(z0);
  const int sy = g.nx, sz = g.nx * g.ny;
  const int dx = x0 + 1 < g.nx ? 1 : 0;
  const int dy = y0 + 1 < g.ny ? sy : 0;
  const int dz = z0 + 1 < g.nz ? sz : 0;
  const int i = x0 + sy * y0 + sz * z0;
  const float v000 = __ldg(data + i), v100 = __ldg(data + i + dx);
  const float v010 = __ldg(data + i + dy), v110 = __ldg(data + i + dy + dx);
  const float v001 = __ldg(data + i + dz), v101 = __ldg(data + i + dz + dx);
  const float v011 = __ldg(data + i + dz + dy), v111 = __ldg(data + i + dz + dy + dx);
  const float c00 = v000 + fx * (v100 - v000);
  const float c10 = v010 + fx * (v110 - v010);
  const float c01 = v001 + fx * (v101 - v001);
  const float c11 = v011 + fx * (v111 - v011);
  const float c0 = c00 + fy * (c10 - c00);
  const float c1 = c01 + fy * (c11 - c01);
  return c0 + fz * (c1 - c0);
}

// Adds q to a 64-bit integer kept as two 32-bit words {low, high} in shared memory, with
// native 32-bit atomics (a 64-bit add on shared memory compiles to a compare-and-swap loop).
// Each add that wraps the low word carries exactly one into the high word, so the pair
// holds the exact sum modulo 2^64 whatever the order of the adds.
__device__ __forceinline__ void add_fixed(unsigned* words, long long q) {
  const unsigned low = unsigned(q), high = unsigned(static_cast<unsigned long long>(q) >> 32);
  const unsigned before = atomicAdd(words, low);
  const unsigned carry = before + low < before ? 1u : 0u;
  if (high + carry != 0u) atomicAdd(words + 1, high + carry);
}

__device__ __forceinline__ long long read_fixed(const unsigned* words) {
  return static_cast<long long>((static_cast<unsigned long long>(words[1]) << 32) | words[0]);
}

// One sample: weight (0 when it does not count), moving value minus the mean, and the
// reference weight for the overlap (0 outside).
struct FusedSample {
  float w, y, overlap;
};

// Samples span voxel `j` (in span order `index`) at reference x, as sample_voxel and cpu.cr
// do, with every load unconditional so that the caller's two samples overlap their latency.
template <bool kPlain>
__device__ __forceinline__ FusedSample sample_span_voxel(const CrArgs& a, const FusedLayout& r, const double* map,
                                                         double rx, double ry, double rz, int x, int index,
                                                         bool in_span) {
  // The CPU sums m0 x + m1 y + m2 z + m3 left to right; rx holds m1 y + m2 z + m3, so the
  // double position can differ in its last bit, which moves the float position only on a
  // rounding tie.
  float px = float(fma(map[0], double(x), rx)), py = float(fma(map[4], double(x), ry)),
        pz = float(fma(map[8], double(x), rz));
  const bool inside = in_span && regpipe_common::inside(a.mov_grid, px, py, pz);
  if (!inside) px = py = pz = 0.f;  // a valid place to load from; the sample weighs 0
  const float value = a.nearest ? regpipe_common::nearest(a.mov, a.mov_grid, px, py, pz)
                                : trilinear_32(a.mov, a.mov_grid, px, py, pz);
  FusedSample s{0.f, value - a.mov_shift, 0.f};
  if (kPlain) {
    s.w = s.overlap = inside ? 1.f : 0.f;
  } else {
    // As sample_voxel and cpu.cr: w_ref * w_mov * border, in double, rounded once.
    const float w_ref = r.ref_weight != nullptr && in_span ? r.ref_weight[index] : 1.f;
    const float w_mov = a.mov_weight != nullptr ? trilinear_32(a.mov_weight, a.mov_grid, px, py, pz) : 1.f;
    s.overlap = inside ? w_ref : 0.f;
    s.w = inside ? float(double(w_ref) * double(w_mov) * a.border(px, py, pz)) : 0.f;
  }
  return s;
}

// Block histogram entries: sum c of bin b at 3 b + c (the global layout), the overlap at
// 3 bins; two 32-bit words each. In the plain kernel the w entries and the overlap count
// samples (every weight is 1) and are scaled when the block merges.
struct BlockHistogram {
  unsigned* words;
  __device__ unsigned* entry(int e) const { return words + 2 * e; }
};

// Accumulators of one lane: the background bin in registers (float, a lane's samples in
// order), the overlap likewise.
struct LaneSums {
  float hot_w = 0.f, hot_wy = 0.f, hot_wyy = 0.f, overlap = 0.f;
};

// A sample's contribution outside the background bin, in fixed point (plain: w is a count).
struct FixedSample {
  long long w, wy, wyy;
};

template <bool kPlain>
__device__ __forceinline__ FixedSample to_fixed(float w, float wy, float wyy, const FixedPointScales& scale) {
  return {kPlain ? 1ll : __float2ll_rn(w * scale.w_f), __float2ll_rn(wy * scale.wy_f),
          __float2ll_rn(wyy * scale.wyy_f)};
}

template <bool kPlain>
__device__ __forceinline__ void add_to_histogram(const BlockHistogram& h, int bin, const FixedSample& q) {
  unsigned* e = h.entry(kSumsPerBin * bin);
  if (kPlain) atomicAdd(e, unsigned(q.w));  // a count: at most 2^32 - 1 samples per block and bin
  else add_fixed(e, q.w);
  add_fixed(e + 2, q.wy);
  add_fixed(e + 4, q.wyy);
}

// Adds a lane's two samples (neighbours along x): background-bin samples to the lane's
// registers, the others to the block histogram, as one add when they share a bin. Integer
// sums: merged or not, the histogram gets the same bits.
template <bool kPlain>
__device__ __forceinline__ void accumulate_pair(const FusedSample (&s)[2], const int (&bin)[2], int hot_bin,
                                                const FixedPointScales& scale, const BlockHistogram& h,
                                                LaneSums& lane) {
  bool cold[2];
  float wy[2], wyy[2];
  for (int v = 0; v < 2; ++v) {
    lane.overlap += s[v].overlap;
    const bool counted = s[v].w > 0.f;
    wy[v] = s[v].w * s[v].y;
    wyy[v] = wy[v] * s[v].y;
    if (counted && bin[v] == hot_bin) {
      lane.hot_w += s[v].w;
      lane.hot_wy += wy[v];
      lane.hot_wyy += wyy[v];
    }
    cold[v] = counted && bin[v] != hot_bin;
  }
  if (cold[0] && cold[1] && bin[0] == bin[1]) {
    const FixedSample q0 = to_fixed<kPlain>(s[0].w, wy[0], wyy[0], scale);
    const FixedSample q1 = to_fixed<kPlain>(s[1].w, wy[1], wyy[1], scale);
    add_to_histogram<kPlain>(h, bin[0], {q0.w + q1.w, q0.wy + q1.wy, q0.wyy + q1.wyy});
    return;
  }
  for (int v = 0; v < 2; ++v)
    if (cold[v]) add_to_histogram<kPlain>(h, bin[v], to_fixed<kPlain>(s[v].w, wy[v], wyy[v], scale));
}

// kPlain: no weight images and no fuzzy border, so every sample inside weighs exactly 1 (the
// common case, compiled without the weighting code). At most 48 registers: the kernel waits
// on its gathers (ncu on an H100: 44% of stalls on L1TEX), so warps matter more than
// registers; 48 lets 5 blocks of 256 threads share an SM (4 at the 56 ptxas would take)
// with no spills in the plain kernel (the weighted one spills ~60 bytes), and still allows
// 1024 threads a block.
template <bool kPlain>
__global__ void __maxnreg__(48) fused_kernel(CrArgs a, FusedLayout r, FixedPointScales scale,
                                                     unsigned* tickets) {
  extern __shared__ unsigned block_words[];  // (3 bins + 1) two-word entries
  __shared__ double map[12];
  __shared__ bool last_block;
  const int bins = a.bins;
  const int entries = kSumsPerBin * bins + 1;
  const BlockHistogram h{block_words};
  for (int i = int(threadIdx.x); i < 2 * entries; i += int(blockDim.x)) block_words[i] = 0u;
  const int t = int(blockIdx.y);
  // The map once per block, not once per span.
  if (threadIdx.x < 12) map[threadIdx.x] = a.maps[12 * t + int(threadIdx.x)];
  __syncthreads();

  const int warps = int(blockDim.x / 32), warp = int(threadIdx.x / 32), lane_id = int(threadIdx.x % 32);
  // This block's contiguous share of the spans; its warps take neighbouring spans.
  const uint32_t first_span = uint32_t(uint64_t(blockIdx.x) * r.span_count / gridDim.x);
  const uint32_t end_span = uint32_t(uint64_t(blockIdx.x + 1) * r.span_count / gridDim.x);
  LaneSums lane;
  for (uint32_t i = first_span + uint32_t(warp); i < end_span; i += uint32_t(warps)) {
    const int4 span = r.spans[i];
    const int y = span.w % a.ref_grid.ny, z = span.w / a.ref_grid.ny;
    const double rx = map[1] * y + map[2] * z + map[3];
    const double ry = map[5] * y + map[6] * z + map[7];
    const double rz = map[9] * y + map[10] * z + map[11];
    for (int first = 0; first < span.z; first += 64) {  // the same trip count for the whole warp
      const int j = first + 2 * lane_id;  // this lane's two neighbouring voxels: j, j + 1
      const bool in0 = j < span.z, in1 = j + 1 < span.z;
      const int bin[2] = {in0 ? int(r.bins[span.x + j]) : 0, in1 ? int(r.bins[span.x + j + 1]) : 0};
      const FusedSample s[2] = {sample_span_voxel<kPlain>(a, r, map, rx, ry, rz, span.y + j, span.x + j, in0),
                                sample_span_voxel<kPlain>(a, r, map, rx, ry, rz, span.y + j + 1, span.x + j + 1, in1)};
      accumulate_pair<kPlain>(s, bin, r.hot_bin, scale, h, lane);
    }
  }
  // The lanes' register sums, in fixed point (plain: w and overlap are counts, exact in float
  // below 2^24), summed over the warp as integers, join the block histogram from lane 0.
  long long hot_w = kPlain ? static_cast<long long>(lane.hot_w) : __double2ll_rn(double(lane.hot_w) * scale.w);
  long long covered = kPlain ? static_cast<long long>(lane.overlap)
                             : __double2ll_rn(double(lane.overlap) * scale.overlap);
  long long hot_wy = __double2ll_rn(double(lane.hot_wy) * scale.wy);
  long long hot_wyy = __double2ll_rn(double(lane.hot_wyy) * scale.wyy);
  for (int offset = 16; offset > 0; offset /= 2) {
    hot_w += __shfl_xor_sync(0xffffffffu, hot_w, offset);
    covered += __shfl_xor_sync(0xffffffffu, covered, offset);
    hot_wy += __shfl_xor_sync(0xffffffffu, hot_wy, offset);
    hot_wyy += __shfl_xor_sync(0xffffffffu, hot_wyy, offset);
  }
  if (lane_id == 0) {
    unsigned* hot = h.entry(kSumsPerBin * r.hot_bin);
    add_fixed(hot, hot_w);
    add_fixed(hot + 2, hot_wy);
    add_fixed(hot + 4, hot_wyy);
    add_fixed(h.entry(entries - 1), covered);
  }
  __syncthreads();

  // Block merge: one native 64-bit integer atomic per non-zero entry. Results layout
  // (cuda_cr_cost.cu): sums[t][3 b + c]; overlap[t].
  auto* sums = reinterpret_cast<unsigned long long*>(a.sums) + std::size_t(t) * kSumsPerBin * bins;
  auto* overlap = reinterpret_cast<unsigned long long*>(a.overlap) + t;
  for (int e = int(threadIdx.x); e < entries; e += int(blockDim.x)) {
    long long v = read_fixed(h.entry(e));
    if (v == 0) continue;
    const bool is_overlap = e == entries - 1;
    if (kPlain && (is_overlap || e % kSumsPerBin == 0)) v *= is_overlap ? scale.overlap_one : scale.w_one;
    atomicAdd(is_overlap ? overlap : sums + e, static_cast<unsigned long long>(v));
  }

  // The last block of transform t to get here finishes it.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(tickets + t, 1u) == gridDim.x - 1;
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
      });
}

template <bool kPlain>
int resident_blocks(int threads_per_block, std::size_t shared) {
  int blocks = 0;
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fused_kernel<kPlain>, threads_per_block, shared));
  if (blocks < 1)
    throw rp::Error(RP_DEVICE, "fused: a block of " + std::to_string(threads_per_block) + " threads with " +
                                   std::to_string(shared) + " bytes of shared memory does not fit on the device");
  return blocks;
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

}  // namespace

void prepare_fused(const ReferenceSpans& spans, int threads_per_block, int bins, cudaStream_t stream,
                   FusedBuffers& buffers, FusedLayout& layout) {
  static_assert(offsetof(Span, first) == offsetof(int4, x) && offsetof(Span, x) == offsetof(int4, y) &&
                    offsetof(Span, length) == offsetof(int4, z) && offsetof(Span, row) == offsetof(int4, w),
                "Span must have int4's layout");
  upload_array(spans.spans, buffers.spans, stream);
  upload_array(spans.bins, buffers.bins, stream);
  if (!spans.weights.empty()) upload_array(spans.weights, buffers.ref_weight, stream);
  layout = FusedLayout{};
  layout.spans = buffers.spans.get();
  layout.span_count = uint32_t(spans.spans.size());
  layout.bins = buffers.bins.get();
  layout.ref_weight = spans.weights.empty() ? nullptr : buffers.ref_weight.get();
  layout.hot_bin = spans.hot_bin;
  const std::size_t shared = fused_histogram_bytes(bins);
  layout.blocks_per_sm[0] = resident_blocks<false>(threads_per_block, shared);
  layout.blocks_per_sm[1] = resident_blocks<true>(threads_per_block, shared);
}

void run_fused(const SchemeLaunch& l) {
  const FusedLayout& r = l.layouts->fused;
  const bool plain = l.unit_weights;
  // Per transform: one wave of resident blocks, or a span per warp when the reference has
  // fewer (short latency chains at the coarse levels); at least one block, which finishes
  // the transform even without spans. Independent of k, so a transform's sums do not depend
  // on the batch it came in.
  const uint32_t warps = uint32_t(l.threads_per_block / 32);
  const std::size_t by_work = std::max<std::size_t>(1, (r.span_count + warps - 1) / warps);
  const std::size_t resident = std::size_t(r.blocks_per_sm[plain ? 1 : 0]) * std::size_t(l.sm_count);
  const unsigned blocks = l.blocks > 0 ? unsigned(l.blocks) : unsigned(std::min(by_work, resident));
  const std::size_t shared = fused_histogram_bytes(l.args.bins);
  const std::size_t entries = std::size_t(l.args.bins) * kSumsPerBin;
  // grid.y is limited to 65535 transforms per launch.
  for (std::size_t first = 0; first < l.k; first += 65535) {
    const unsigned batch = unsigned(std::min<std::size_t>(65535, l.k - first));
    CrArgs args = l.args;
    args.maps += 12 * first;
    args.sums += first * entries;
    args.overlap += first;
    args.costs_out += first;
    args.overlaps_out += first;
    const dim3 grid(blocks, batch);
    if (plain)
      fused_kernel<true><<<grid, l.threads_per_block, shared, l.stream>>>(args, r, l.fixed, l.tickets + first);
    else
      fused_kernel<false><<<grid, l.threads_per_block, shared, l.stream>>>(args, r, l.fixed, l.tickets + first);
    RP_CUDA_CHECK_LAUNCH("fused_kernel");
  }
}

}  // namespace regpipe::cost_cr_cuda
