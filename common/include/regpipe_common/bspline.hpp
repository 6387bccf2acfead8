// Cubic B-spline interpolation (Unser, "Splines: a perfect fit for signal and image
// processing", IEEE Signal Processing Magazine 16(6), 1999; Thevenaz, Blu & Unser,
// "Interpolation revisited", IEEE TMI 19(7), 2000, section IV), shared by resample.cpu and
// resample.cuda (__host__ __device__ under nvcc). The samples are first turned into B-spline
// coefficients by the recursive filter with pole sqrt(3) - 2 (causal then anti-causal pass per
// axis, mirror boundaries), so the spline passes through every sample. Coefficients are
// double, like ITK's BSplineInterpolateImageFunction: the filter's gain (6 per axis) would
// cost float precision.
#pragma once

#include "resample_sampling.hpp"

#include <float.h>
#include <math.h>

namespace regpipe_common {

RP_HD double bspline_pole() { return sqrt(3.0) - 2.0; }

// c+[0] for the mirror boundary (Thevenaz et al. 2000, eq. 23 and their reference code):
// the truncated sum when z^k falls below epsilon within the line, else the exact closed form.
RP_HD double bspline_initial_causal(const double* c, long n, long stride) {
  const double pole = bspline_pole();
  const long horizon = static_cast<long>(ceil(log(DBL_EPSILON) / log(fabs(pole))));
  if (horizon < n) {
    double zk = pole, sum = c[0];
    for (long k = 1; k < horizon; ++k) {
      sum += zk * c[k * stride];
      zk *= pole;
    }
    return sum;
  }
  double zk = pole;
  const double iz = 1.0 / pole;
  double z2n = pow(pole, static_cast<double>(n - 1));
  double sum = c[0] + z2n * c[(n - 1) * stride];
  z2n *= z2n * iz;
  for (long k = 1; k <= n - 2; ++k) {
    sum += (zk + z2n) * c[k * stride];
    zk *= pole;
    z2n *= iz;
  }
  return sum / (1.0 - zk * zk);
}

// Turns the n samples c[0], c[stride], ... into their coefficients, in place.
RP_HD void bspline_filter_line(double* c, long n, long stride) {
  if (n == 1) return;
  const double pole = bspline_pole();
  const double gain = (1.0 - pole) * (1.0 - 1.0 / pole);  // makes the filter reproduce constants
  for (long k = 0; k < n; ++k) c[k * stride] *= gain;
  c[0] = bspline_initial_causal(c, n, stride);
  for (long k = 1; k < n; ++k) c[k * stride] += pole * c[(k - 1) * stride];
  // c-[n-1] for the mirror boundary.
  c[(n - 1) * stride] = (pole / (pole * pole - 1.0)) * (pole * c[(n - 2) * stride] + c[(n - 1) * stride]);
  for (long k = n - 2; k >= 0; --k) c[k * stride] = pole * (c[(k + 1) * stride] - c[k * stride]);
}

// The four cubic B-spline weights for neighbours floor(x)-1 .. floor(x)+2; returns floor(x).
RP_HD long bspline_weights(double x, double w[4]) {
  const double f = floor(x), t = x - f;
  const double t2 = t * t, t3 = t2 * t, u = 1.0 - t;
  w[0] = u * u * u / 6.0;
  w[1] = (4.0 - 6.0 * t2 + 3.0 * t3) / 6.0;
  w[2] = (1.0 + 3.0 * t + 3.0 * t2 - 3.0 * t3) / 6.0;
  w[3] = t3 / 6.0;
  return static_cast<long>(f);
}

// The spline at voxel position (x, y, z) (any real position; neighbours beyond the edges mirror).
RP_HD float bspline_sample(const double* coefficients, const Grid& g, double x, double y, double z) {
  double wx[4], wy[4], wz[4];
  const long x0 = bspline_weights(x, wx) - 1, y0 = bspline_weights(y, wy) - 1, z0 = bspline_weights(z, wz) - 1;
  long ix[4];
  for (int a = 0; a < 4; ++a) ix[a] = mirror(x0 + a, g.nx);
  double sum = 0.0;
  for (int c = 0; c < 4; ++c) {
    const long plane = mirror(z0 + c, g.nz) * g.ny;
    for (int b = 0; b < 4; ++b) {
      const double* row = coefficients + (plane + mirror(y0 + b, g.ny)) * g.nx;
      const double s = wx[0] * row[ix[0]] + wx[1] * row[ix[1]] + wx[2] * row[ix[2]] + wx[3] * row[ix[3]];
      sum += wz[c] * wy[b] * s;
    }
  }
  return static_cast<float>(sum);
}

}  // namespace regpipe_common
