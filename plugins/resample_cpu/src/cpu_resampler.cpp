#include "cpu_resampler.hpp"

#include "bspline.hpp"
#include "gaussian_prefilter.hpp"
#include "parallel_for.hpp"
#include "resample_params.hpp"

#include <regpipe_common/bspline.hpp>
#include <regpipe_common/resample_request.hpp>
#include <regpipe_common/resample_sampling.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <vector>

namespace regpipe::resample {
namespace {

using regpipe_common::Grid;

// Fills the output grid: background outside regpipe_common::inside() (the domain the costs
// sample), sample(x, y, z) at input voxel positions inside it.
template <class Sample>
void fill_output(const rp_resample_request& r, const regpipe_common::VoxelMap& map, const Grid& in,
                 unsigned threads, const std::function<bool()>& cancelled, const Sample& sample) {
  const size_t nx = r.out_dims[0], ny = r.out_dims[1], nz = r.out_dims[2];
  const double* m = map.m;
  parallel_for(nz, threads, cancelled, [&](size_t k) {
    for (size_t j = 0; j < ny; ++j) {
      float* out = r.out_data + nx * (j + ny * k);
      for (size_t i = 0; i < nx; ++i) {
        const double x = regpipe_common::snap_to_domain(m[0] * i + m[1] * j + m[2] * k + m[3], in.nx);
        const double y = regpipe_common::snap_to_domain(m[4] * i + m[5] * j + m[6] * k + m[7], in.ny);
        const double z = regpipe_common::snap_to_domain(m[8] * i + m[9] * j + m[10] * k + m[11], in.nz);
        out[i] = regpipe_common::inside(in, float(x), float(y), float(z)) ? sample(x, y, z)
                                                                          : r.background;
      }
    }
  });
}

// The input voxels the interpolation reads, per axis (a superset): a prefilter need produce
// only those. Input coordinate a is m[a][0] i + m[a][1] j + m[a][2] k + m[a][3]; stepping
// along the output axis that moves it most, with the other two terms' range added, bounds it
// for each step, and nearest or trilinear reads the planes at and just above each bound. For
// a pyramid level (an axis-aligned map) that is two planes of every eight at 8 mm; sinc and
// B-spline read widely.
VoxelSelection voxels_read(const rp_resample_request& r, const regpipe_common::VoxelMap& map, const Dims& dims) {
  if (r.interpolation != RP_INTERP_NEAREST && r.interpolation != RP_INTERP_TRILINEAR) return all_voxels(dims);
  constexpr double kMargin = 1e-3;  // voxels: snap_to_domain's snap and the rounding to float, with room
  VoxelSelection selection;
  for (int a = 0; a < 3; ++a) {
    const double* m = map.m + 4 * a;
    int along = 0;
    for (int b = 1; b < 3; ++b)
      if (std::fabs(m[b]) * (r.out_dims[b] - 1.0) > std::fabs(m[along]) * (r.out_dims[along] - 1.0)) along = b;
    double low = m[3], high = m[3];
    for (int b = 0; b < 3; ++b) {
      if (b == along) continue;
      const double reach = m[b] * (r.out_dims[b] - 1.0);
      low += std::min(0.0, reach);
      high += std::max(0.0, reach);
    }
    const double last = dims[a] - 1.0;
    std::vector<char> read(dims[a], 0);
    for (uint32_t t = 0; t < r.out_dims[along]; ++t) {
      const double step = m[along] * t;
      const double first = std::max(0.0, std::floor(low + step - kMargin));
      const double end = std::min(last, std::floor(high + step + kMargin) + 1.0);
      for (double i = first; i <= end; ++i) read[size_t(i)] = 1;
    }
    for (uint32_t i = 0; i < dims[a]; ++i)
      if (read[i]) selection.index[a].push_back(i);
  }
  return selection;
}

}  // namespace

CpuResampler::CpuResampler(const rp_host* host, const rp::Params& params) : host_(host) {
  auto read = [&](ResampleParam p) { return params.get_number(kResampleParams[p]); };
  threads_ = static_cast<unsigned>(read(kThreads));
  sinc_radius_ = static_cast<int>(read(kSincRadius));
}

bool CpuResampler::cancel_requested() const {
  return host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, should_cancel) &&
         host_->should_cancel != nullptr && host_->should_cancel(host_->ctx) != 0;
}

void CpuResampler::resample(const rp_resample_request& r) {
  regpipe_common::check_resample_request(
      r, "resample.cpu", {RP_INTERP_NEAREST, RP_INTERP_TRILINEAR, RP_INTERP_SINC, RP_INTERP_BSPLINE});
  const rp_image& in = *r.input;
  const Dims dims{in.dims[0], in.dims[1], in.dims[2]};
  const Grid grid{int(dims[0]), int(dims[1]), int(dims[2])};
  const std::function<bool()> cancelled = [this] { return cancel_requested(); };

  static const double kIdentity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  regpipe_common::VoxelMap map;
  if (!regpipe_common::make_voxel_map(r.out_voxel_to_world, r.matrix ? r.matrix : kIdentity,
                                      in.voxel_to_world, &map))
    throw rp::Error(RP_INTERNAL, "voxel map failed although check_request accepted the grids");

  const float* source = in.data;
  // calloc's fresh pages cost nothing until written, and the smoothing writes only what the
  // interpolation reads: at 8 mm, about a quarter of the image (a copy of the input, before,
  // wrote all of it for every level).
  std::unique_ptr<float, decltype(&std::free)> smoothed(nullptr, &std::free);
  std::array<double, 3> sigma_voxels{};
  for (int a = 0; a < 3; ++a)
    sigma_voxels[a] = r.prefilter_sigma_mm[a] / regpipe_common::axis_spacing(in.voxel_to_world, a);
  if (sigma_voxels[0] > 0.0 || sigma_voxels[1] > 0.0 || sigma_voxels[2] > 0.0) {
    smoothed.reset(static_cast<float*>(std::calloc(size_t(dims[0]) * dims[1] * dims[2], sizeof(float))));
    if (!smoothed) throw std::bad_alloc();
    gaussian_smooth(in.data, smoothed.get(), dims, sigma_voxels, voxels_read(r, map, dims),
                    threads_, cancelled);
    source = smoothed.get();
  }

  switch (r.interpolation) {
    case RP_INTERP_NEAREST:
      fill_output(r, map, grid, threads_, cancelled, [&](double x, double y, double z) {
        return regpipe_common::nearest(source, grid, float(x), float(y), float(z));
      });
      break;
    case RP_INTERP_TRILINEAR:
      fill_output(r, map, grid, threads_, cancelled, [&](double x, double y, double z) {
        return regpipe_common::trilinear(source, grid, float(x), float(y), float(z));
      });
      break;
    case RP_INTERP_SINC:
      fill_output(r, map, grid, threads_, cancelled, [&](double x, double y, double z) {
        return regpipe_common::sinc_sample(source, grid, sinc_radius_, x, y, z);
      });
      break;
    case RP_INTERP_BSPLINE: {
      const std::vector<double> coefficients =
          bspline_coefficients(source, dims, threads_, cancelled);
      fill_output(r, map, grid, threads_, cancelled, [&](double x, double y, double z) {
        return regpipe_common::bspline_sample(coefficients.data(), grid, x, y, z);
      });
      break;
    }
  }
}

}  // namespace regpipe::resample
