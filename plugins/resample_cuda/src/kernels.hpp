// The kernels of resample.cuda: one thread per output voxel (or per line for the B-spline
// filter), arithmetic in the same order as resample.cpu (the plugin is compiled without FMA
// contraction, so the results are the same bit for bit where the CPU's arithmetic is plain
// IEEE: prefilter, nearest, trilinear).
#pragma once

#include <regpipe_common/voxel_map.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace regpipe::resample_cuda {

struct Extent {
  uint32_t nx, ny, nz;
  RP_HD std::size_t count() const { return std::size_t(nx) * ny * nz; }
};

// One pass of the separable Gaussian along `axis`: out = in smoothed with the half kernel
// `weights[0..radius]`, each output normalised by the taps inside the line (resample.cpu's
// gaussian_smooth).
void launch_smooth_axis(const float* in, float* out, Extent extent, int axis, const double* weights, int radius,
                        cudaStream_t stream);

// The cubic B-spline coefficients of `in` (regpipe_common::bspline_filter_line along each
// axis, one thread per line) into `coefficients`.
void launch_bspline_coefficients(const float* in, double* coefficients, Extent extent, cudaStream_t stream);

struct SampleArgs {
  const float* input;              // the (smoothed) input image on the device
  regpipe_common::Grid input_grid;
  regpipe_common::VoxelMap map;    // output voxel -> input voxel
  Extent out;
  float* output;
  const double* coefficients;      // RP_INTERP_BSPLINE: the input's spline coefficients
  int32_t interpolation;           // RP_INTERP_*
  int sinc_radius;
  float background;
  cudaTextureObject_t texture;     // non-zero: trilinear through the texture units
};

void launch_sample(const SampleArgs& args, cudaStream_t stream);

// Loads the pyramid's kernels (smoothing, sampling) now rather than at their first launches
// (regpipe_common_cuda/kernel_loading.hpp).
void load_pyramid_kernels();

}  // namespace regpipe::resample_cuda
