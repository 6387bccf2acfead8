#include "kernels.hpp"

#include <regpipe/abi.h>
#include <regpipe_common/bspline.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>
#include <regpipe_common_cuda/kernel_loading.hpp>

namespace regpipe::resample_cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t count) { return unsigned((count + kThreads - 1) / kThreads); }

__global__ void smooth_axis_kernel(const float* __restrict__ in, float* __restrict__ out, Extent e, int axis,
                                   const double* __restrict__ weights, int radius) {
  const std::size_t v = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= e.count()) return;
  const long x = long(v % e.nx), y = long((v / e.nx) % e.ny), z = long(v / (std::size_t(e.nx) * e.ny));
  const long position = axis == 0 ? x : (axis == 1 ? y : z);
  const long length = axis == 0 ? long(e.nx) : (axis == 1 ? long(e.ny) : long(e.nz));
  const long stride = axis == 0 ? 1L : (axis == 1 ? long(e.nx) : long(e.nx) * long(e.ny));
  const float* line = in + (long(v) - position * stride);
  // resample.cpu's loop: taps from left to right, sums in double.
  double sum = 0.0, weight = 0.0;
  const long first = position - radius > 0 ? position - radius : 0;
  const long last = position + radius < length - 1 ? position + radius : length - 1;
  for (long j = first; j <= last; ++j) {
    const double wj = weights[j > position ? j - position : position - j];
    sum += wj * double(line[j * stride]);
    weight += wj;
  }
  out[v] = float(sum / weight);
}

__global__ void to_double_kernel(const float* __restrict__ in, double* __restrict__ out, std::size_t count) {
  const std::size_t v = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < count) out[v] = double(in[v]);
}

// One thread per line along `axis`; neighbouring threads take neighbouring lines, so the
// y and z passes read coalesced.
__global__ void bspline_filter_kernel(double* c, Extent e, int axis) {
  const std::size_t line = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t plane = std::size_t(e.nx) * e.ny;
  std::size_t first;
  long n, stride;
  if (axis == 0) {
    if (line >= std::size_t(e.ny) * e.nz) return;
    first = line * e.nx, n = e.nx, stride = 1;
  } else if (axis == 1) {
    if (line >= std::size_t(e.nx) * e.nz) return;
    first = line % e.nx + plane * (line / e.nx), n = e.ny, stride = long(e.nx);
  } else {
    if (line >= plane) return;
    first = line, n = e.nz, stride = long(plane);
  }
  regpipe_common::bspline_filter_line(c + first, n, stride);
}

__global__ void sample_kernel(SampleArgs a) {
  const std::size_t v = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v >= a.out.count()) return;
  // size_t -> double as resample.cpu's fill_output computes m0 i + m1 j + m2 k + m3.
  const double i = double(v % a.out.nx), j = double((v / a.out.nx) % a.out.ny),
               k = double(v / (std::size_t(a.out.nx) * a.out.ny));
  const double* m = a.map.m;
  const regpipe_common::Grid& g = a.input_grid;
  const double x = regpipe_common::snap_to_domain(m[0] * i + m[1] * j + m[2] * k + m[3], g.nx);
  const double y = regpipe_common::snap_to_domain(m[4] * i + m[5] * j + m[6] * k + m[7], g.ny);
  const double z = regpipe_common::snap_to_domain(m[8] * i + m[9] * j + m[10] * k + m[11], g.nz);
  const float fx = float(x), fy = float(y), fz = float(z);
  float value = a.background;
  if (regpipe_common::inside(g, fx, fy, fz)) {
    if (a.interpolation == RP_INTERP_NEAREST)
      value = regpipe_common::nearest(a.input, g, fx, fy, fz);
    else if (a.interpolation == RP_INTERP_BSPLINE)
      value = regpipe_common::bspline_sample(a.coefficients, g, x, y, z);
    else if (a.interpolation == RP_INTERP_SINC)
      value = regpipe_common::sinc_sample(a.input, g, a.sinc_radius, x, y, z);
    else if (a.texture != 0)  // texel centres sit at integer + 0.5
      value = tex3D<float>(a.texture, fx + 0.5f, fy + 0.5f, fz + 0.5f);
    else
      value = regpipe_common::trilinear(a.input, g, fx, fy, fz);
  }
  a.output[v] = value;
}

}  // namespace

void load_pyramid_kernels() {
  regpipe_common_cuda::load_kernels(
      {reinterpret_cast<const void*>(smooth_axis_kernel), reinterpret_cast<const void*>(sample_kernel)});
}

void launch_smooth_axis(const float* in, float* out, Extent extent, int axis, const double* weights, int radius,
                        cudaStream_t stream) {
  smooth_axis_kernel<<<blocks_for(extent.count()), kThreads, 0, stream>>>(in, out, extent, axis, weights, radius);
  RP_CUDA_CHECK_LAUNCH("smooth_axis_kernel");
}

void launch_bspline_coefficients(const float* in, double* coefficients, Extent e, cudaStream_t stream) {
  to_double_kernel<<<blocks_for(e.count()), kThreads, 0, stream>>>(in, coefficients, e.count());
  RP_CUDA_CHECK_LAUNCH("to_double_kernel");
  const uint32_t dims[3] = {e.nx, e.ny, e.nz};
  for (int axis = 0; axis < 3; ++axis) {
    if (dims[axis] == 1) continue;
    bspline_filter_kernel<<<blocks_for(e.count() / dims[axis]), kThreads, 0, stream>>>(coefficients, e, axis);
    RP_CUDA_CHECK_LAUNCH("bspline_filter_kernel");
  }
}

void launch_sample(const SampleArgs& args, cudaStream_t stream) {
  sample_kernel<<<blocks_for(args.out.count()), kThreads, 0, stream>>>(args);
  RP_CUDA_CHECK_LAUNCH("sample_kernel");
}

}  // namespace regpipe::resample_cuda
