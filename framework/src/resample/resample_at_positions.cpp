// An image sampled at precomputed input positions (a chain with displacement fields), with the
// sampling functions resample.cpu uses at a position, so a position that an affine alone
// would give samples the same value either way.
#include <regpipe/host/resample_through_chain.hpp>

#include "resample/label_at.hpp"

#include <regpipe/host/error.hpp>

#include <regpipe_common/bspline.hpp>
#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/resample_sampling.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <string>
#include <vector>

namespace regpipe {
namespace {

using regpipe_common::Grid;

constexpr int kSincRadius = 4;  // resample.cpu's default sinc_radius

// Unser's cubic B-spline coefficients of the whole volume (resample.cpu's prefilter: the same
// line filter, mirror boundaries), double as there.
std::vector<double> bspline_coefficients(const Image& input) {
  std::vector<double> c(input.data.begin(), input.data.end());
  const size_t n[3] = {input.dims[0], input.dims[1], input.dims[2]};
  const size_t stride[3] = {1, n[0], n[0] * n[1]};
  for (int axis = 0; axis < 3; ++axis) {
    if (n[axis] == 1) continue;
    const int a = (axis + 1) % 3, b = (axis + 2) % 3;  // the two axes that index the lines
    regpipe_common::parallel_slabs(n[b], [&](size_t jb) {
      std::vector<double> line(n[axis]);
      for (size_t ja = 0; ja < n[a]; ++ja) {
        const size_t first = ja * stride[a] + jb * stride[b];
        for (size_t m = 0; m < n[axis]; ++m) line[m] = c[first + m * stride[axis]];
        regpipe_common::bspline_filter_line(line.data(), long(n[axis]), 1);
        for (size_t m = 0; m < n[axis]; ++m) c[first + m * stride[axis]] = line[m];
      }
    });
  }
  return c;
}

// out[i] = sample(x, y, z) where the position is inside the input's domain, else 0.
template <class Sample>
void fill(Image& out, const Grid& in, const SamplePositions& positions, const Sample& sample) {
  const size_t slab = size_t(out.dims[0]) * out.dims[1];
  regpipe_common::parallel_slabs(out.dims[2], [&](size_t k) {
    for (size_t i = k * slab; i < (k + 1) * slab; ++i) {
      const float* p = &positions.xyz[3 * i];
      if (regpipe_common::inside(in, p[0], p[1], p[2])) out.data[i] = sample(p[0], p[1], p[2]);
    }
  });
}

}  // namespace

Image resample_at_positions(const Image& input, const Image& grid, const SamplePositions& positions,
                            Interpolation interpolation) {
  if (positions.dims != grid.dims || positions.xyz.size() != 3 * grid.voxel_count())
    throw UserError("internal: sample positions for another grid");
  Image out = zero_image_on(grid, input.file_type);
  const Grid in{int(input.dims[0]), int(input.dims[1]), int(input.dims[2])};
  const float* data = input.data.data();
  switch (interpolation) {
    case Interpolation::nearest:
      fill(out, in, positions,
           [&](float x, float y, float z) { return regpipe_common::nearest(data, in, x, y, z); });
      break;
    case Interpolation::trilinear:
      fill(out, in, positions,
           [&](float x, float y, float z) { return regpipe_common::trilinear(data, in, x, y, z); });
      break;
    case Interpolation::sinc:
      fill(out, in, positions, [&](float x, float y, float z) {
        return regpipe_common::sinc_sample(data, in, kSincRadius, x, y, z);
      });
      break;
    case Interpolation::bspline: {
      const std::vector<double> coefficients = bspline_coefficients(input);
      fill(out, in, positions, [&](float x, float y, float z) {
        return regpipe_common::bspline_sample(coefficients.data(), in, x, y, z);
      });
      break;
    }
    case Interpolation::label:
      fill(out, in, positions,
           [&](float x, float y, float z) { return resample_detail::label_at(input, in, x, y, z); });
      break;
  }
  return out;
}

}  // namespace regpipe
