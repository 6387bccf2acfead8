#include "bspline.hpp"

#include <regpipe_common/resample_sampling.hpp>

#include <cfloat>
#include <cmath>

namespace regpipe::resample {
namespace {

const double kPole = std::sqrt(3.0) - 2.0;
// (1 - z)(1 - 1/z): the filter's gain, which makes it reproduce constants.
const double kGain = (1.0 - kPole) * (1.0 - 1.0 / kPole);

// c+[0] for the mirror boundary (Thevenaz et al. 2000, eq. 23 and their reference code):
// the truncated sum when z^k falls below epsilon within the line, else the exact closed form.
double initial_causal(const double* c, long n) {
  const long horizon =
      static_cast<long>(std::ceil(std::log(DBL_EPSILON) / std::log(std::fabs(kPole))));
  if (horizon < n) {
    double zk = kPole, sum = c[0];
    for (long k = 1; k < horizon; ++k) {
      sum += zk * c[k];
      zk *= kPole;
    }
    return sum;
  }
  double zk = kPole;
  const double iz = 1.0 / kPole;
  double z2n = std::pow(kPole, static_cast<double>(n - 1));
  double sum = c[0] + z2n * c[n - 1];
  z2n *= z2n * iz;
  for (long k = 1; k <= n - 2; ++k) {
    sum += (zk + z2n) * c[k];
    zk *= kPole;
    z2n *= iz;
  }
  return sum / (1.0 - zk * zk);
}

// c-[n-1] for the mirror boundary.
double initial_anticausal(const double* c, long n) {
  return (kPole / (kPole * kPole - 1.0)) * (kPole * c[n - 2] + c[n - 1]);
}

void filter_line(double* c, long n) {
  if (n == 1) return;
  for (long k = 0; k < n; ++k) c[k] *= kGain;
  c[0] = initial_causal(c, n);
  for (long k = 1; k < n; ++k) c[k] += kPole * c[k - 1];
  c[n - 1] = initial_anticausal(c, n);
  for (long k = n - 2; k >= 0; --k) c[k] = kPole * (c[k + 1] - c[k]);
}

// The four cubic B-spline weights for neighbours floor(x)-1 .. floor(x)+2, and floor(x).
long cubic_weights(double x, double w[4]) {
  const double f = std::floor(x), t = x - f;
  const double t2 = t * t, t3 = t2 * t, u = 1.0 - t;
  w[0] = u * u * u / 6.0;
  w[1] = (4.0 - 6.0 * t2 + 3.0 * t3) / 6.0;
  w[2] = (1.0 + 3.0 * t + 3.0 * t2 - 3.0 * t3) / 6.0;
  w[3] = t3 / 6.0;
  return static_cast<long>(f);
}

}  // namespace

std::vector<double> bspline_coefficients(const float* data, const Dims& dims, unsigned threads,
                                         const std::function<bool()>& cancelled) {
  std::vector<double> c(data, data + static_cast<size_t>(dims[0]) * dims[1] * dims[2]);
  for (int axis = 0; axis < 3; ++axis) {
    if (dims[axis] == 1) continue;
    for_each_line(dims, axis, threads, cancelled, [&](size_t first, size_t stride, size_t n) {
      std::vector<double> line(n);
      for (size_t m = 0; m < n; ++m) line[m] = c[first + m * stride];
      filter_line(line.data(), static_cast<long>(n));
      for (size_t m = 0; m < n; ++m) c[first + m * stride] = line[m];
    });
  }
  return c;
}

float bspline_sample(const double* coefficients, const Dims& dims, double x, double y, double z) {
  const long nx = dims[0], ny = dims[1], nz = dims[2];
  double wx[4], wy[4], wz[4];
  const long x0 = cubic_weights(x, wx) - 1, y0 = cubic_weights(y, wy) - 1,
             z0 = cubic_weights(z, wz) - 1;
  long ix[4];
  for (int a = 0; a < 4; ++a) ix[a] = regpipe_common::mirror(x0 + a, nx);
  double sum = 0.0;
  for (int c = 0; c < 4; ++c) {
    const long plane = regpipe_common::mirror(z0 + c, nz) * ny;
    for (int b = 0; b < 4; ++b) {
      const double* row = coefficients + (plane + regpipe_common::mirror(y0 + b, ny)) * nx;
      const double s =
          wx[0] * row[ix[0]] + wx[1] * row[ix[1]] + wx[2] * row[ix[2]] + wx[3] * row[ix[3]];
      sum += wz[c] * wy[b] * s;
    }
  }
  return static_cast<float>(sum);
}

}  // namespace regpipe::resample
