// The first half of the traversal of a row span: every voxel's moving position and its
// sample, into small buffers; trilinear samples eight voxels at a time with AVX2 where the CPU
// has it (gathers for the eight corners), otherwise one voxel at a time. The values are those
// of the scalar helpers bit for bit: the same double products and sums rounded once to float,
// the same float operations in the same order (mul and add apart: no FMA is enabled here, so
// nothing is contracted), only several voxels per instruction. The measure's accumulation,
// which must stay in x order, is the second half (traversal.hpp).
#pragma once

#include "row_span.hpp"
#include "settings.hpp"

#include <regpipe_common/voxel_map.hpp>

#include <cstddef>
#include <cstdint>

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

// Coordinate `axis` of voxels x_begin + [0, count) of row (y, z), four at a time:
// ((m0 x + m1 y) + m2 z) + m3 in double, rounded to float, the scalar expression's operations
// in its order (x stepped by 4.0 in double, exact for any grid index). Writes whole groups of
// eight, as sample_row_avx2 reads them: up to seven values past `count`, inside the buffers.
__attribute__((target("avx2"))) inline void coordinates(const double* r, int x_begin, int count,
                                                        int y, int z, float* out) {
  const __m256d m0 = _mm256_set1_pd(r[0]), ty = _mm256_set1_pd(r[1] * y),
                tz = _mm256_set1_pd(r[2] * z), t3 = _mm256_set1_pd(r[3]), four = _mm256_set1_pd(4.0);
  __m256d x = _mm256_setr_pd(x_begin, x_begin + 1.0, x_begin + 2.0, x_begin + 3.0);
  for (int i = 0; i < ((count + 7) & ~7); i += 4, x = _mm256_add_pd(x, four)) {
    const __m256d p = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(m0, x), ty), tz), t3);
    _mm_storeu_ps(out + i, _mm256_cvtpd_ps(p));
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

// The lanes set in `lanes` read data[base + offset]; the others read nothing and give 0.
__attribute__((target("avx2"))) inline __m256 gather(const float* data, __m256i base, __m256i offset,
                                                     __m256 lanes) {
  return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), data, _mm256_add_epi32(base, offset), lanes, 4);
}

// regpipe_common::trilinear for the points of `lanes` (inside the domain; the other lanes'
// points may be anywhere and are not read): the lower corner by truncation, the upper one
// clamped to the last plane, the same interpolation order.
__attribute__((target("avx2"))) inline __m256 trilinear8(const float* data,
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
  const __m256i dxy = _mm256_add_epi32(dx, dy), dxz = _mm256_add_epi32(dx, dz),
                dyz = _mm256_add_epi32(dy, dz), dxyz = _mm256_add_epi32(dxy, dz);
  const __m256 c00 = lerp(gather(data, base, _mm256_setzero_si256(), lanes), gather(data, base, dx, lanes), fx);
  const __m256 c10 = lerp(gather(data, base, dy, lanes), gather(data, base, dxy, lanes), fx);
  const __m256 c01 = lerp(gather(data, base, dz, lanes), gather(data, base, dxz, lanes), fx);
  const __m256 c11 = lerp(gather(data, base, dyz, lanes), gather(data, base, dxyz, lanes), fx);
  return lerp(lerp(c00, c10, fy), lerp(c01, c11, fy), fz);
}

__attribute__((target("avx2"))) inline void sample_row_avx2(const regpipe_common::VoxelMap& map,
                                                            const float* data,
                                                            const regpipe_common::Grid& mov,
                                                            int x_begin, int count, int y, int z,
                                                            RowSamples& out) {
  // First every position (independent of the samples, so the gathers below never wait for
  // them), then the samples. The last group's lanes past `count` are masked: their points lie
  // outside the span.
  coordinates(map.m, x_begin, count, y, z, out.x);
  coordinates(map.m + 4, x_begin, count, y, z, out.y);
  coordinates(map.m + 8, x_begin, count, y, z, out.z);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int i = 0; i < count; i += 8) {  // count <= kChunk, a multiple of 8: the buffers hold it
    const __m256 lanes = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(count - i), lane));
    _mm256_storeu_ps(out.value + i, trilinear8(data, mov, _mm256_loadu_ps(out.x + i),
                                               _mm256_loadu_ps(out.y + i),
                                               _mm256_loadu_ps(out.z + i), lanes));
  }
}

}  // namespace avx2_detail
#endif

// Whether sample_row may use AVX2 for a moving image of this many voxels (32-bit gather
// offsets), decided once per process.
inline bool row_sampler_uses_avx2(std::size_t moving_voxels) {
#ifdef REGPIPE_COST_CPU_AVX2
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  return has_avx2 && moving_voxels < (std::size_t(1) << 31);
#else
  (void)moving_voxels;
  return false;
#endif
}

// Positions and samples of voxels x_begin + [0, count) of row (y, z), count <= kChunk.
inline void sample_row(Interpolation interpolation, bool avx2, const regpipe_common::VoxelMap& map,
                       const float* data, const regpipe_common::Grid& mov, int x_begin, int count,
                       int y, int z, RowSamples& out) {
  if (interpolation == Interpolation::kNearest)
    return sample_row_scalar<Interpolation::kNearest>(map, data, mov, x_begin, 0, count, y, z, out);
#ifdef REGPIPE_COST_CPU_AVX2
  if (avx2) return avx2_detail::sample_row_avx2(map, data, mov, x_begin, count, y, z, out);
#endif
  (void)avx2;
  sample_row_scalar<Interpolation::kTrilinear>(map, data, mov, x_begin, 0, count, y, z, out);
}

}  // namespace regpipe::cost_cpu
