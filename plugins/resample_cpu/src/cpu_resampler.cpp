#include "cpu_resampler.hpp"

#include "bspline.hpp"
#include "gaussian_prefilter.hpp"
#include "parallel_for.hpp"
#include "resample_params.hpp"

#include <regpipe_common/bspline.hpp>
#include <regpipe_common/resample_request.hpp>
#include <regpipe_common/resample_sampling.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <array>
#include <cmath>
#include <functional>
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

}  // namespace

CpuResampler::CpuResampler(const rp_host* host, const rp::Params& params) : host_(host) {
  auto read = [&](ResampleParam p) {
    const rp_param_desc& d = kResampleParams[p];
    const long long v = params.get_int(d.name);
    rp::Params::check_range(d.name, static_cast<double>(v), d.min, d.max);
    return v;
  };
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

  const float* source = in.data;
  std::vector<float> smoothed;
  std::array<double, 3> sigma_voxels{};
  for (int a = 0; a < 3; ++a)
    sigma_voxels[a] = r.prefilter_sigma_mm[a] / regpipe_common::axis_spacing(in.voxel_to_world, a);
  if (sigma_voxels[0] > 0.0 || sigma_voxels[1] > 0.0 || sigma_voxels[2] > 0.0) {
    smoothed.assign(in.data, in.data + size_t(dims[0]) * dims[1] * dims[2]);
    gaussian_smooth(smoothed.data(), dims, sigma_voxels, threads_, cancelled);
    source = smoothed.data();
  }

  static const double kIdentity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  regpipe_common::VoxelMap map;
  if (!regpipe_common::make_voxel_map(r.out_voxel_to_world, r.matrix ? r.matrix : kIdentity,
                                      in.voxel_to_world, &map))
    throw rp::Error(RP_INTERNAL, "voxel map failed although check_request accepted the grids");

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
