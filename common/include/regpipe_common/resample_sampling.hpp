// The sampling of the resamplers, shared by resample.cpu and resample.cuda (__host__
// __device__ under nvcc): the snap of near-domain positions, mirror extension and the
// Hann-windowed sinc. Sinc and cosine come from the platform's libm on the CPU and CUDA's
// on the GPU, which differ by an ulp or two: the two resamplers agree to ~1e-6 relative for
// sinc and bit for bit for nearest and trilinear (regpipe_common::nearest / trilinear).
#pragma once

#include "voxel_map.hpp"

#include <math.h>

namespace regpipe_common {

constexpr int kMaxSincRadius = 16;

// Positions computed through two matrix inversions land a few ulps off the grid, so an
// identity resampling would lose its border planes to a coordinate of -1e-17. Positions this
// close to the sampling domain [0, n-1] are moved onto it.
RP_HD double snap_to_domain(double v, int n) {
  constexpr double kEdgeSnap = 1e-6;  // voxels
  const double last = n - 1;
  if (v < 0.0 && v > -kEdgeSnap) return 0.0;
  if (v > last && v < last + kEdgeSnap) return last;
  return v;
}

// Whole-sample mirror extension of a line of n samples: ... 2 1 | 0 1 ... n-2 n-1 | n-2 ...
// The boundary under which Unser's B-spline coefficient filter is exact; the windowed sinc
// reads beyond the edges the same way.
RP_HD long mirror(long i, long n) {
  if (n == 1) return 0;
  const long period = 2 * (n - 1);
  i = (i < 0 ? -i : i) % period;
  return i < n ? i : period - i;
}

// The taps of one axis: sinc(d) * (0.5 + 0.5 cos(pi d / radius)) for |d| < radius,
// normalised to sum 1 so constants are reproduced exactly (the window alone leaves a ripple
// of 3e-3 at radius 4). At an integer position the only tap is the sample itself.
struct SincTaps {
  long index[2 * kMaxSincRadius];
  double weight[2 * kMaxSincRadius];
  int count = 0;
};

RP_HD SincTaps sinc_taps(double x, long n, int radius) {
  constexpr double kPi = 3.14159265358979323846;
  SincTaps taps;
  const double f = floor(x);
  const long base = static_cast<long>(f);
  if (x == f) {
    taps.index[0] = mirror(base, n);
    taps.weight[0] = 1.0;
    taps.count = 1;
    return taps;
  }
  double total = 0.0;
  for (long k = base - radius + 1; k <= base + radius; ++k) {
    const double d = x - static_cast<double>(k);
    const double window = 0.5 + 0.5 * cos(kPi * d / radius);
    const double w = sin(kPi * d) / (kPi * d) * window;
    taps.index[taps.count] = mirror(k, n);
    taps.weight[taps.count] = w;
    ++taps.count;
    total += w;
  }
  for (int i = 0; i < taps.count; ++i) taps.weight[i] /= total;
  return taps;
}

// Separable Hann-windowed sinc at input voxel position (x, y, z); taps beyond the edges read
// mirrored samples.
RP_HD float sinc_sample(const float* data, const Grid& g, int radius, double x, double y, double z) {
  const SincTaps tx = sinc_taps(x, g.nx, radius), ty = sinc_taps(y, g.ny, radius),
                 tz = sinc_taps(z, g.nz, radius);
  double sum = 0.0;
  for (int c = 0; c < tz.count; ++c) {
    for (int b = 0; b < ty.count; ++b) {
      const float* row = data + (tz.index[c] * g.ny + ty.index[b]) * g.nx;
      double s = 0.0;
      for (int a = 0; a < tx.count; ++a) s += tx.weight[a] * row[tx.index[a]];
      sum += tz.weight[c] * ty.weight[b] * s;
    }
  }
  return static_cast<float>(sum);
}

}  // namespace regpipe_common
