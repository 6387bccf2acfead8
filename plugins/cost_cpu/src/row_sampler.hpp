// The first half of the traversal of a row span: every voxel's moving position and its
// sample, into small buffers; trilinear samples eight voxels at a time with AVX2 where the CPU
// has it (each pair of x-neighbouring corners in one 64-bit load), otherwise one voxel at a
// time. The values are those of the scalar helpers bit for bit: the same double products and
// sums rounded once to float, the same float operations in the same order (mul and add apart:
// no FMA is enabled here, so nothing is contracted), only several voxels per instruction. The
// measure's accumulation, which must stay in x order, is the second half (traversal.hpp).
#pragma once

#include "row_span.hpp"
#include "settings.hpp"

#include <regpipe_common/voxel_map.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define REGPIPE_COST_CPU_AVX2 1
#endif

namespace regpipe::cost_cpu {

// Positions and samples of up to kRowChunk consecutive voxels of one reference row.
struct RowSamples {
  static constexpr int kChunk = 64;  // a multiple of 8 (AVX2 lanes)
  float x[kChunk], y[kChunk], z[kChunk], value[kChunk];
};

// Voxels x_begin + i, from <= i < count <= kChunk, all inside the moving sampling domain.
template <Interpolation kInterpolation>
void sample_row_scalar(const regpipe_common::VoxelMap& map, const float* data,
                       const regpipe_common::Grid& mov, int x_begin, int from, int count, int y,
                       int z, RowSamples& out) {
  for (int i = from; i < count; ++i) {
    const int x = x_begin + i;
    out.x[i] = mapped_coordinate(map, 0, x, y, z);
    out.y[i] = mapped_coordinate(map, 1, x, y, z);
    out.z[i] = mapped_coordinate(map, 2, x, y, z);
    out.value[i] = kInterpolation == Interpolation::kNearest
                       ? regpipe_common::nearest(data, mov, out.x[i], out.y[i], out.z[i])
                       : regpipe_common::trilinear(data, mov, out.x[i], out.y[i], out.z[i]);
  }
}

#ifdef REGPIPE_COST_CPU_AVX2
namespace avx2_detail {

// The three coordinates of voxels x_begin + [0, count) of row (y, z), four voxels at a time:
// per axis ((m0 x + m1 y) + m2 z) + m3 in double, rounded to float, the scalar expression's
// operations in its order (x stepped by 4.0 in double, exact for any grid index). One loop for
// the three axes: x's step, an add each iteration that the next waits for, is shared (three
// loops each waited on their own). Writes whole groups of eight, as sample_row_avx2 reads them:
// up to seven values past `count`, inside the buffers.
__attribute__((target("avx2"))) inline void coordinates(const double* m, int x_begin, int count,
                                                        int y, int z, RowSamples& out) {
  __m256d m0[3], ty[3], tz[3], t3[3];
  for (int a = 0; a < 3; ++a) {
    const double* r = m + 4 * a;
    m0[a] = _mm256_set1_pd(r[0]);
    ty[a] = _mm256_set1_pd(r[1] * y);
    tz[a] = _mm256_set1_pd(r[2] * z);
    t3[a] = _mm256_set1_pd(r[3]);
  }
  float* const axis_out[3] = {out.x, out.y, out.z};
  const __m256d four = _mm256_set1_pd(4.0);
  __m256d x = _mm256_setr_pd(x_begin, x_begin + 1.0, x_begin + 2.0, x_begin + 3.0);
  for (int i = 0; i < ((count + 7) & ~7); i += 4, x = _mm256_add_pd(x, four))
    for (int a = 0; a < 3; ++a) {
      const __m256d p = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(m0[a], x), ty[a]), tz[a]), t3[a]);
      _mm_storeu_ps(axis_out[a] + i, _mm256_cvtpd_ps(p));
    }
}

// a + f * (b - a), as regpipe_common::trilinear writes each of its seven steps.
__attribute__((target("avx2"))) inline __m256 lerp(__m256 a, __m256 b, __m256 f) {
  return _mm256_add_ps(a, _mm256_mul_ps(f, _mm256_sub_ps(b, a)));
}

// The step from a lower corner c0 to its upper neighbour: the axis stride, or 0 on the last
// plane (trilinear's clamp).
__attribute__((target("avx2"))) inline __m256i step_up(__m256i c0, int n, int stride) {
  const __m256i next = _mm256_add_epi32(c0, _mm256_set1_epi32(1));
  return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(n), next), _mm256_set1_epi32(stride));
}

// 64-bit elements {0, 2, 1, 3} of v: undoes the per-128-bit-lane interleave of shuffle_ps.
__attribute__((target("avx2"))) inline __m256 in_lane_order(__m256 v) {
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), _MM_SHUFFLE(3, 1, 2, 0)));
}

// The lower and upper x-corner values of eight points along one corner row: lane k loads the
// two neighbouring floats at row[at[k]] (lower corner, then upper) with one 64-bit load: eight
// plain loads where gathering each corner cost about two cycles a float (AMD Zen 4: one 1 mm
// evaluation a fifth faster, bench/results/elastix.md). A lane whose upper corner is clamped
// (`clamped`, the last x plane) loads the pair ending at its voxel, so both corners are that
// pair's upper float: the voxel twice, as trilinear's clamp gives.
__attribute__((target("avx2"))) inline void corner_pairs(const float* row, const int32_t* at,
                                                         __m256 clamped, __m256& lower,
                                                         __m256& upper) {
  const auto pair_at = [&](int lane) {
    long long two;
    std::memcpy(&two, row + at[lane], sizeof two);
    return two;
  };
  // Lanes 0-3 and 4-7 as {lower, upper} pairs, then the lowers and the uppers apart.
  const __m256 a = _mm256_castsi256_ps(_mm256_setr_epi64x(pair_at(0), pair_at(1), pair_at(2), pair_at(3)));
  const __m256 b = _mm256_castsi256_ps(_mm256_setr_epi64x(pair_at(4), pair_at(5), pair_at(6), pair_at(7)));
  upper = in_lane_order(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
  lower = _mm256_blendv_ps(in_lane_order(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))),
                           upper, clamped);
}

// The pairs of corner row `offset` (per lane: 0, the y step, the z step or both) from `pair`.
__attribute__((target("avx2"))) inline void corner_row(const float* data, __m256i pair,
                                                       __m256i offset, __m256 clamped,
                                                       __m256& lower, __m256& upper) {
  alignas(32) int32_t at[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(at), _mm256_add_epi32(pair, offset));
  corner_pairs(data, at, clamped, lower, upper);
}

// regpipe_common::trilinear for the points of `lanes` (inside the domain; the other lanes'
// points may be anywhere: those lanes load from the image's first voxels instead): the lower
// corner by truncation, the upper one clamped to the last plane, the same interpolation order.
// Needs nx >= 2 (a clamped lane reads the voxel before its own). Always inlined: as a call,
// each group of eight re-broadcast the grid's strides and spilled its corner rows to the stack
// (cpu.cr's 1 mm evaluations about 6 % slower on AMD Zen 4, bench/results/elastix.md).
__attribute__((target("avx2"), always_inline)) inline __m256 trilinear8(const float* data,
                                                         const regpipe_common::Grid& g, __m256 x,
                                                         __m256 y, __m256 z, __m256 lanes) {
  const __m256i x0 = _mm256_cvttps_epi32(x), y0 = _mm256_cvttps_epi32(y),
                z0 = _mm256_cvttps_epi32(z);
  const __m256 fx = _mm256_sub_ps(x, _mm256_cvtepi32_ps(x0));
  const __m256 fy = _mm256_sub_ps(y, _mm256_cvtepi32_ps(y0));
  const __m256 fz = _mm256_sub_ps(z, _mm256_cvtepi32_ps(z0));
  const int sy = g.nx, sz = g.nx * g.ny;
  const __m256i dx = step_up(x0, g.nx, 1), dy = step_up(y0, g.ny, sy), dz = step_up(z0, g.nz, sz);
  const __m256i base = _mm256_add_epi32(
      x0, _mm256_add_epi32(_mm256_mullo_epi32(y0, _mm256_set1_epi32(sy)),
                           _mm256_mullo_epi32(z0, _mm256_set1_epi32(sz))));
  // The pair starts at the lower corner, or one voxel before it where the upper is clamped
  // (dx = 0); lanes outside `lanes` start at voxel 0 instead of their point.
  const __m256i pair = _mm256_and_si256(_mm256_add_epi32(base, _mm256_sub_epi32(dx, _mm256_set1_epi32(1))),
                                        _mm256_castps_si256(lanes));
  const __m256 clamped = _mm256_castsi256_ps(_mm256_cmpeq_epi32(dx, _mm256_setzero_si256()));
  __m256 lo[4], hi[4];
  // Away from the last y and z planes (nearly every group), the four rows are whole strides
  // apart in every lane: their pairs come from one set of offsets.
  const __m256i whole_steps = _mm256_and_si256(_mm256_cmpeq_epi32(dy, _mm256_set1_epi32(sy)),
                                               _mm256_cmpeq_epi32(dz, _mm256_set1_epi32(sz)));
  if (_mm256_movemask_epi8(whole_steps) == -1) {
    alignas(32) int32_t at[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(at), pair);
    const float* rows[4] = {data, data + sy, data + sz, data + sy + sz};
    for (int r = 0; r < 4; ++r) corner_pairs(rows[r], at, clamped, lo[r], hi[r]);
  } else {
    const __m256i offsets[4] = {_mm256_setzero_si256(), dy, dz, _mm256_add_epi32(dy, dz)};
    for (int r = 0; r < 4; ++r) corner_row(data, pair, offsets[r], clamped, lo[r], hi[r]);
  }
  const __m256 c00 = lerp(lo[0], hi[0], fx), c10 = lerp(lo[1], hi[1], fx);
  const __m256 c01 = lerp(lo[2], hi[2], fx), c11 = lerp(lo[3], hi[3], fx);
  return lerp(lerp(c00, c10, fy), lerp(c01, c11, fy), fz);
}

// How far ahead along a row the prefetching sampler asks for corners: about the time the
// L3 or memory takes to answer (32 voxels were fastest of 16-128 on AMD Zen 4).
inline constexpr int kPrefetchVoxelsAhead = 32;

// Asks the caches for the lines of the four corner rows of the point `ahead` (the sampled
// point kPrefetchVoxelsAhead voxels further along the row, the map's x column times that
// added), clamped into the image: a hint only, no value depends on it. Always inlined: GCC
// takes a call to it for one without effect (a prefetch changes nothing) and drops it.
__attribute__((target("avx2"), always_inline)) inline void prefetch_corners(
    const float* data, const regpipe_common::Grid& g, float x, float y, float z,
    const float* ahead) {
  const long sy = g.nx, sz = long(g.nx) * g.ny;
  const long last = long(regpipe_common::voxel_count(g)) - 1 - sy - sz;
  const long at = std::clamp(long(x + ahead[0]) + long(y + ahead[1]) * sy + long(z + ahead[2]) * sz,
                             0L, std::max(last, 0L));
  __builtin_prefetch(data + at);
  __builtin_prefetch(data + at + sy);
  __builtin_prefetch(data + at + sz);
  __builtin_prefetch(data + at + sy + sz);
}

// kPrefetch: a moving level larger than a core's L2, where the corner loads would otherwise
// wait on the L3 or memory (regpipe_bench_cr, one thread, Zen 4: its 2 mm level 7.2 -> 6.0 ms,
// its 1 mm level 118 -> 68 ms per evaluation); on a level inside the L2 the hints cost a few
// per cent and are left out.
template <bool kPrefetch>
__attribute__((target("avx2"))) inline void sample_row_avx2(const regpipe_common::VoxelMap& map,
                                                            const float* data,
                                                            const regpipe_common::Grid& mov,
                                                            int x_begin, int count, int y, int z,
                                                            RowSamples& out) {
  // First every position (independent of the samples, so the loads below never wait for
  // them), then the samples. The last group's lanes past `count` are masked: their points lie
  // outside the span.
  coordinates(map.m, x_begin, count, y, z, out);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const float ahead[3] = {float(map.m[0] * kPrefetchVoxelsAhead),
                          float(map.m[4] * kPrefetchVoxelsAhead),
                          float(map.m[8] * kPrefetchVoxelsAhead)};
  for (int i = 0; i < count; i += 8) {  // count <= kChunk, a multiple of 8: the buffers hold it
    if constexpr (kPrefetch) prefetch_corners(data, mov, out.x[i], out.y[i], out.z[i], ahead);
    const __m256 lanes = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(count - i), lane));
    _mm256_storeu_ps(out.value + i, trilinear8(data, mov, _mm256_loadu_ps(out.x + i),
                                               _mm256_loadu_ps(out.y + i),
                                               _mm256_loadu_ps(out.z + i), lanes));
  }
}

}  // namespace avx2_detail
#endif

// How sample_row samples a moving grid: a voxel at a time, eight at a time with AVX2, or
// eight at a time with the corners further along the row prefetched.
enum class RowSampler { kScalar, kAvx2, kAvx2Prefetching };

// The sampler for this moving grid: AVX2 where the CPU has it (decided once per process) and
// the grid allows it (32-bit offsets; at least two voxels along x, which trilinear8's clamped
// lanes need); prefetching where the grid is larger than a core's L2 cache.
inline RowSampler row_sampler_for(const regpipe_common::Grid& mov) {
#ifdef REGPIPE_COST_CPU_AVX2
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  static const std::size_t l2_bytes = [] {
    const long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return bytes > 0 ? std::size_t(bytes) : std::size_t(1) << 20;
  }();
  const std::size_t voxels = regpipe_common::voxel_count(mov);
  if (!has_avx2 || voxels >= (std::size_t(1) << 31) || mov.nx < 2) return RowSampler::kScalar;
  return voxels * sizeof(float) > l2_bytes ? RowSampler::kAvx2Prefetching : RowSampler::kAvx2;
#else
  (void)mov;
  return RowSampler::kScalar;
#endif
}

// Positions and samples of voxels x_begin + [0, count) of row (y, z), count <= kChunk.
inline void sample_row(Interpolation interpolation, RowSampler sampler,
                       const regpipe_common::VoxelMap& map, const float* data,
                       const regpipe_common::Grid& mov, int x_begin, int count, int y, int z,
                       RowSamples& out) {
  if (interpolation == Interpolation::kNearest)
    return sample_row_scalar<Interpolation::kNearest>(map, data, mov, x_begin, 0, count, y, z, out);
#ifdef REGPIPE_COST_CPU_AVX2
  if (sampler == RowSampler::kAvx2Prefetching)
    return avx2_detail::sample_row_avx2<true>(map, data, mov, x_begin, count, y, z, out);
  if (sampler == RowSampler::kAvx2)
    return avx2_detail::sample_row_avx2<false>(map, data, mov, x_begin, count, y, z, out);
#endif
  (void)sampler;
  sample_row_scalar<Interpolation::kTrilinear>(map, data, mov, x_begin, 0, count, y, z, out);
}

}  // namespace regpipe::cost_cpu
