// fused (ours). What makes it faster than Li & Kumar's five schemes on Hopper (README.md):
// - one launch for all k transforms of a call (grid.y = transform);
// - warps walk "spans", runs of weighted reference voxels along x made once per reference:
//   coalesced 2-byte bin loads, no index division, the row part of the voxel map computed
//   once per span, and reference voxels of weight 0 never visited;
// - the most populated bin (the background: 44% of chris_t1, up to 77% of a head in Li &
//   Kumar's Table IV) is summed in registers;
// - the other samples of a warp are grouped by bin (match.any) and summed by shuffles, and
//   one lane per group adds the group to the warp's private shared histogram with plain
//   loads and stores: no atomics, none of the CAS loops that float atomics on shared memory
//   compile to (sm_90 has no native float add on shared memory);
// - the warp histograms of a block are summed in a fixed order and added to global memory as
//   64-bit fixed point (native integer atomics, associative).
// Deterministic: every sum has a fixed order or is an integer sum, so the costs repeat bit
// for bit and do not depend on k (the partition of the spans depends only on the reference
// and the device).
#include "../kernels/cr_sample.cuh"
#include "schemes.hpp"

#include <algorithm>

namespace regpipe::cost_cr_cuda {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;

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

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullWarp, v, offset);
  return v;
}

// kPlain: no weight images and no fuzzy border, so every sample inside weighs exactly 1 (the
// common case, compiled without the weighting code). ptxas for sm_90 (CUDA 13.0): 52
// registers (plain) and 59 (weighted), no spills: 4 blocks of 256 threads per SM, limited by
// registers (shared memory: 24.6 KB a block at 256 bins).
template <bool kPlain>
__global__ void __launch_bounds__(1024) fused_kernel(CrArgs a, FusedLayout r, FixedPointScales scale) {
  // Per warp: sum w [bins], sum w y [bins], sum w y^2 [bins], overlap [1].
  extern __shared__ float warp_histograms[];
  const int bins = a.bins;
  const int stride = kSumsPerBin * bins + 1;
  const int warps = int(blockDim.x / 32), warp = int(threadIdx.x / 32), lane = int(threadIdx.x % 32);
  float* hist = warp_histograms + warp * stride;
  for (int i = lane; i < stride; i += 32) hist[i] = 0.f;
  __syncwarp();

  const int t = int(blockIdx.y);
  const double* m = a.maps + 12 * t;
  const double mx = m[0], my = m[4], mz = m[8];  // d(position)/dx
  float hot_w = 0.f, hot_wy = 0.f, hot_wyy = 0.f, overlap = 0.f;

  for (uint32_t s = blockIdx.x * warps + warp; s < r.span_count; s += gridDim.x * warps) {
    const int4 span = r.spans[s];
    const int y = span.w % a.ref_grid.ny, z = span.w / a.ref_grid.ny;
    // The part of each coordinate that is constant along the span, once per span. The CPU
    // sums m0 x + m1 y + m2 z + m3 left to right; this order differs in the last double bit
    // at most, which moves a float position only on a rounding tie.
    const double rx = m[1] * y + m[2] * z + m[3];
    const double ry = m[5] * y + m[6] * z + m[7];
    const double rz = m[9] * y + m[10] * z + m[11];
    for (int first = 0; first < span.z; first += 32) {  // the same trip count for the whole warp
      const int j = first + lane;
      const bool in_span = j < span.z;
      const int bin = in_span ? int(r.bins[span.x + j]) : 0;
      float w = 0.f, value = 0.f;
      if (in_span) {
        const double x = double(span.y + j);
        const float px = float(fma(mx, x, rx)), py = float(fma(my, x, ry)), pz = float(fma(mz, x, rz));
        if (regpipe_common::inside(a.mov_grid, px, py, pz)) {
          if (kPlain) {
            overlap += 1.f;
            w = 1.f;
          } else {
            // As sample_voxel and cpu.cr: w_ref * w_mov * border, in double, rounded once.
            const float w_ref = r.ref_weight != nullptr ? r.ref_weight[span.x + j] : 1.f;
            overlap += w_ref;
            const float w_mov = a.mov_weight != nullptr ? trilinear_32(a.mov_weight, a.mov_grid, px, py, pz) : 1.f;
            w = float(double(w_ref) * double(w_mov) * a.border(px, py, pz));
          }
          if (w > 0.f)
            value = a.nearest ? regpipe_common::nearest(a.mov, a.mov_grid, px, py, pz)
                              : trilinear_32(a.mov, a.mov_grid, px, py, pz);
        }
      }
      const float yv = value - a.mov_shift;
      const bool counted = w > 0.f;
      if (counted && bin == r.hot_bin) {
        const float wy = w * yv;
        hot_w += w;
        hot_wy += wy;
        hot_wyy += wy * yv;
      }
      const bool cold = counted && bin != r.hot_bin;
      if (!__any_sync(kFullWarp, cold)) continue;
      // Group the warp's cold samples by bin; each group is summed in lane order.
      const unsigned peers = __match_any_sync(kFullWarp, cold ? bin : -1);
      const int group = cold ? __popc(peers) : 0;
      const int rounds = int(__reduce_max_sync(kFullWarp, unsigned(group)));
      unsigned rest = peers;
      float gw = 0.f, gwy = 0.f, gwyy = 0.f;
      for (int i = 0; i < rounds; ++i) {
        const int src = rest != 0 ? __ffs(int(rest)) - 1 : lane;
        rest &= rest - 1;
        const float wj = kPlain ? 1.f : __shfl_sync(kFullWarp, w, src);
        const float yj = __shfl_sync(kFullWarp, yv, src);
        if (i < group) {
          const float wyj = wj * yj;
          gw += wj;
          gwy += wyj;
          gwyy += wyj * yj;
        }
      }
      if (cold && lane == __ffs(int(peers)) - 1) {  // the group's lowest lane adds it
        hist[bin] += gw;
        hist[bins + bin] += gwy;
        hist[2 * bins + bin] += gwyy;
      }
      __syncwarp();
    }
  }

  hot_w = warp_sum(hot_w);
  hot_wy = warp_sum(hot_wy);
  hot_wyy = warp_sum(hot_wyy);
  overlap = warp_sum(overlap);
  if (lane == 0) {
    hist[r.hot_bin] += hot_w;
    hist[bins + r.hot_bin] += hot_wy;
    hist[2 * bins + r.hot_bin] += hot_wyy;
    hist[kSumsPerBin * bins] = overlap;
  }
  __syncthreads();

  // Block merge in warp order (double), then one fixed-point atomic per non-zero entry.
  // Results layout (cuda_cr_cost.cu): sums[t][3 b + c], then overlap[t] after all k sums.
  auto* sums = reinterpret_cast<unsigned long long*>(a.sums) + std::size_t(t) * kSumsPerBin * bins;
  for (int e = int(threadIdx.x); e < stride; e += int(blockDim.x)) {
    double total = 0.0;
    for (int w = 0; w < warps; ++w) total += double(warp_histograms[w * stride + e]);
    if (total == 0.0) continue;
    const int c = e / bins, b = e % bins;
    if (c == kSumsPerBin) {
      atomicAdd(reinterpret_cast<unsigned long long*>(a.overlap) + t,
                static_cast<unsigned long long>(llrint(total * scale.overlap)));
    } else {
      const double s = c == 0 ? scale.w : (c == 1 ? scale.wy : scale.wyy);
      atomicAdd(sums + kSumsPerBin * b + c, static_cast<unsigned long long>(llrint(total * s)));
    }
  }
}

template <bool kPlain>
int resident_blocks(int threads_per_block, std::size_t shared) {
  RP_CUDA_CHECK(cudaFuncSetAttribute(fused_kernel<kPlain>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  int blocks = 0;
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fused_kernel<kPlain>, threads_per_block, shared));
  if (blocks < 1)
    throw rp::Error(RP_DEVICE, "fused: a block of " + std::to_string(threads_per_block) + " threads with " +
                                   std::to_string(shared) + " bytes of shared memory does not fit on the device");
  return blocks;
}

}  // namespace

void prepare_fused(const regpipe_common::PreparedImage& ref, int hot_bin, int threads_per_block, cudaStream_t stream,
                   FusedBuffers& buffers, FusedLayout& layout) {
  const regpipe_common::Grid& g = ref.grid;
  std::vector<int4> spans;
  std::vector<uint16_t> bins;
  std::vector<float> weights;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y) {
      const std::size_t row = std::size_t(g.nx) * (std::size_t(y) + std::size_t(g.ny) * std::size_t(z));
      for (int x = 0; x < g.nx;) {
        if (!(ref.weight(row + x) > 0.f)) {
          ++x;
          continue;
        }
        const int start = x;
        const int offset = int(bins.size());
        for (; x < g.nx && ref.weight(row + x) > 0.f; ++x) {
          bins.push_back(uint16_t(ref.voxel_bins[row + x]));
          if (!ref.weights.empty()) weights.push_back(ref.weights[row + x]);
        }
        spans.push_back(make_int4(offset, start, x - start, y + g.ny * z));
      }
    }
  buffers.spans.upload(spans, stream);
  buffers.bins.upload(bins, stream);
  if (!weights.empty()) buffers.ref_weight.upload(weights, stream);
  layout = FusedLayout{};
  layout.spans = buffers.spans.get();
  layout.span_count = uint32_t(spans.size());
  layout.bins = buffers.bins.get();
  layout.ref_weight = weights.empty() ? nullptr : buffers.ref_weight.get();
  layout.hot_bin = hot_bin;
  const std::size_t shared = per_warp_histogram_bytes(threads_per_block, ref.binning.bins);
  layout.blocks_per_sm[0] = resident_blocks<false>(threads_per_block, shared);
  layout.blocks_per_sm[1] = resident_blocks<true>(threads_per_block, shared);
}

void run_fused(const SchemeLaunch& l) {
  const FusedLayout& r = l.layouts->fused;
  if (r.span_count == 0) return;
  const bool plain = l.unit_weights;
  // Per transform: one wave of resident blocks, or a span per warp when the reference has
  // fewer (short latency chains at the coarse levels). Independent of k, so a transform's
  // sums do not depend on the batch it came in.
  const uint32_t warps = uint32_t(l.threads_per_block / 32);
  const std::size_t by_work = (r.span_count + warps - 1) / warps;
  const std::size_t resident = std::size_t(r.blocks_per_sm[plain ? 1 : 0]) * std::size_t(l.sm_count);
  const unsigned blocks = l.blocks > 0 ? unsigned(l.blocks) : unsigned(std::min(by_work, resident));
  const std::size_t shared = per_warp_histogram_bytes(l.threads_per_block, l.args.bins);
  const std::size_t entries = std::size_t(l.args.bins) * kSumsPerBin;
  // grid.y is limited to 65535 transforms per launch.
  for (std::size_t first = 0; first < l.k; first += 65535) {
    const unsigned batch = unsigned(std::min<std::size_t>(65535, l.k - first));
    CrArgs args = l.args;
    args.maps += 12 * first;
    args.sums += first * entries;
    args.overlap += first;
    const dim3 grid(blocks, batch);
    if (plain)
      fused_kernel<true><<<grid, l.threads_per_block, shared, l.stream>>>(args, r, l.fixed);
    else
      fused_kernel<false><<<grid, l.threads_per_block, shared, l.stream>>>(args, r, l.fixed);
    RP_CUDA_CHECK_LAUNCH("fused_kernel");
  }
}

}  // namespace regpipe::cost_cr_cuda
