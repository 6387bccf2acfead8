#include "windowed_sinc.hpp"

#include "mirror.hpp"

#include <cmath>

namespace regpipe::resample {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct AxisTaps {
  long index[2 * kMaxSincRadius];
  double weight[2 * kMaxSincRadius];
  int count = 0;
};

AxisTaps axis_taps(double x, long n, int radius) {
  AxisTaps taps;
  const double f = std::floor(x);
  const long base = static_cast<long>(f);
  if (x == f) {  // on a sample: sinc vanishes at every other tap
    taps.index[0] = mirror(base, n);
    taps.weight[0] = 1.0;
    taps.count = 1;
    return taps;
  }
  double total = 0.0;
  for (long k = base - radius + 1; k <= base + radius; ++k) {
    const double d = x - static_cast<double>(k);
    const double window = 0.5 + 0.5 * std::cos(kPi * d / radius);
    const double w = std::sin(kPi * d) / (kPi * d) * window;
    taps.index[taps.count] = mirror(k, n);
    taps.weight[taps.count] = w;
    ++taps.count;
    total += w;
  }
  for (int i = 0; i < taps.count; ++i) taps.weight[i] /= total;
  return taps;
}

}  // namespace

float sinc_sample(const float* data, const Dims& dims, int radius, double x, double y, double z) {
  const long nx = dims[0], ny = dims[1], nz = dims[2];
  const AxisTaps tx = axis_taps(x, nx, radius), ty = axis_taps(y, ny, radius),
                 tz = axis_taps(z, nz, radius);
  double sum = 0.0;
  for (int c = 0; c < tz.count; ++c) {
    for (int b = 0; b < ty.count; ++b) {
      const float* row = data + (tz.index[c] * ny + ty.index[b]) * nx;
      double s = 0.0;
      for (int a = 0; a < tx.count; ++a) s += tx.weight[a] * row[tx.index[a]];
      sum += tz.weight[c] * ty.weight[b] * s;
    }
  }
  return static_cast<float>(sum);
}

}  // namespace regpipe::resample
