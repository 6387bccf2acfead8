// Partial-volume interpolation (Maes et al. 1997) in fixed point, for histograms counted as
// integers (cuda.mi / cuda.nmi with partial_volume): a sample's weight of one is split over its
// 8 trilinear neighbours exactly as cpu.mi's add_partial_volume splits it, but in integer units
// of 2^-kPartialVolumeFractionBits, rounded so that the 8 parts always sum to exactly one unit
// sample. __host__ __device__ (and bit-identical on both: every product is exact in double and
// the one rounding is to nearest even), so a CPU emulation counts what the GPU counts.
#pragma once

#include <regpipe_common/voxel_map.hpp>  // RP_HD

#include <cmath>
#include <cstdint>

namespace regpipe_common {

// A sample weighs 2^20 units. The finer the units, the closer to cpu.mi's double weights
// (each part within 1.5 units of the exact product), but the more often a hot bin's 32-bit
// shared-memory counter wraps and sends 2^32 to global memory: the background pair, ~half the
// samples of a 1 mm brain, wraps once in 2^12 samples. plugins/cost_mi_cuda/README.md has the
// error this gives against cpu.mi.
inline constexpr int kPartialVolumeFractionBits = 20;
inline constexpr uint32_t kPartialVolumeOne = uint32_t(1) << kPartialVolumeFractionBits;

// round(f * n) for f in [0, 1] and n <= 2^21: the product is exact in double (24 x 21 bits),
// so host and device round the same value the same way.
RP_HD uint32_t partial_volume_split(float f, uint32_t n) {
#if defined(__CUDA_ARCH__)
  return __double2uint_rn(double(f) * double(n));
#else
  return uint32_t(std::nearbyint(double(f) * double(n)));
#endif
}

// The 8 parts of one sample at fractions (fx, fy, fz) = position - int(position) (as
// regpipe_common::trilinear computes them), in cpu.mi's neighbour order: w[a + 2 b + 4 c] for
// neighbour (x0 + a, y0 + b, z0 + c). Split hierarchically, z then y then x, each upper part
// rounded and the lower part the remainder, so the parts sum to kPartialVolumeOne exactly and
// each is within 1.5 units of kPartialVolumeOne * wx[a] * wy[b] * wz[c].
RP_HD void partial_volume_weights(float fx, float fy, float fz, uint32_t w[8]) {
  const uint32_t z1 = partial_volume_split(fz, kPartialVolumeOne);
  const uint32_t zs[2] = {kPartialVolumeOne - z1, z1};
  for (int c = 0; c < 2; ++c) {
    const uint32_t y1 = partial_volume_split(fy, zs[c]);
    const uint32_t ys[2] = {zs[c] - y1, y1};
    for (int b = 0; b < 2; ++b) {
      const uint32_t x1 = partial_volume_split(fx, ys[b]);
      w[4 * c + 2 * b] = ys[b] - x1;
      w[4 * c + 2 * b + 1] = x1;
    }
  }
}

}  // namespace regpipe_common
