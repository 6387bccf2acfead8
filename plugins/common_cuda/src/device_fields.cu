// Kernels of the device field operations (device_fields.hpp): one thread per output voxel,
// each evaluating the CPU reference's per-voxel formula through the shared __host__
// __device__ helpers of displacement_field.hpp and voxel_map.hpp. Compiled with
// --fmad=false (CMakeLists.txt) so that double and float expressions round as on the host.
// Deterministic: no atomics; block reductions in a fixed tree order.
#include "device_field_kernels.hpp"

#include "regpipe_common_cuda/cuda_check.hpp"

#include <regpipe_common/resample_sampling.hpp>
#include <regpipe_common/voxel_map.hpp>

namespace regpipe_common_cuda::detail {
namespace {

using regpipe_common::DisplacementFieldView;
using regpipe_common::FieldGeometry;
using regpipe_common::Grid;
using regpipe_common::Vec3;

constexpr int kBlock = 256;

struct Voxel {
  int x, y, z;
};

__device__ __forceinline__ Voxel voxel_of(std::size_t i, const Grid& g) {
  const std::size_t plane = std::size_t(g.nx) * std::size_t(g.ny);
  const std::size_t z = i / plane, r = i - z * plane;
  return {int(r % std::size_t(g.nx)), int(r / std::size_t(g.nx)), int(z)};
}

__device__ __forceinline__ void store(float* out, std::size_t i, Vec3 u) {
  out[3 * i] = float(u.x);
  out[3 * i + 1] = float(u.y);
  out[3 * i + 2] = float(u.z);
}

std::size_t count_of(const Grid& g) { return std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz); }
unsigned blocks_for(std::size_t n) { return unsigned((n + kBlock - 1) / kBlock); }

struct WarpParams {
  const float* moving;
  Grid moving_dims;
  double world_to_moving[16];
  DisplacementFieldView field;
  FieldGeometry output;
  float background;
  float* out;
};

__global__ void warp_image_kernel(const WarpParams p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const Grid& g = p.output.dims;
  if (i >= std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz)) return;
  const Voxel v = voxel_of(i, g);
  const Vec3 x = regpipe_common::world_of_voxel(p.output, v.x, v.y, v.z);
  const Vec3 m = regpipe_common::apply_affine(p.world_to_moving, x + regpipe_common::sample_displacement(p.field, x));
  const Grid& mg = p.moving_dims;
  const float vx = float(regpipe_common::snap_to_domain(m.x, mg.nx)),
              vy = float(regpipe_common::snap_to_domain(m.y, mg.ny)),
              vz = float(regpipe_common::snap_to_domain(m.z, mg.nz));
  p.out[i] = regpipe_common::inside(mg, vx, vy, vz) ? regpipe_common::trilinear(p.moving, mg, vx, vy, vz)
                                                    : p.background;
}

struct ComposeParams {
  DisplacementFieldView first, second;
  float* out;
};

__global__ void compose_kernel(const ComposeParams p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const Grid& g = p.first.geometry.dims;
  if (i >= std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz)) return;
  const Voxel v = voxel_of(i, g);
  const Vec3 x = regpipe_common::world_of_voxel(p.first.geometry, v.x, v.y, v.z);
  const Vec3 u = regpipe_common::vector_at(p.first, i);
  store(p.out, i, u + regpipe_common::sample_displacement(p.second, x + u));
}

struct ResampleParams {
  DisplacementFieldView field;
  FieldGeometry geometry;
  float* out;
};

__global__ void resample_kernel(const ResampleParams p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const Grid& g = p.geometry.dims;
  if (i >= std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz)) return;
  const Voxel v = voxel_of(i, g);
  store(p.out, i, regpipe_common::sample_displacement(p.field, regpipe_common::world_of_voxel(p.geometry, v.x, v.y, v.z)));
}

// gaussian_smoothing.cpp's smooth_axis for one output voxel (of a field, 3 components, or an
// image, 1): the same taps in the same order
// (d = -radius .. radius), the line clamped at its ends, double sums, one float store.
__global__ void smooth_axis_kernel(const SmoothAxisParams p) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const Grid& g = p.dims;
  if (i >= std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz)) return;
  const Voxel v = voxel_of(i, g);
  const int at = p.axis == 0 ? v.x : p.axis == 1 ? v.y : v.z;
  const int length = p.axis == 0 ? g.nx : p.axis == 1 ? g.ny : g.nz;
  const long stride = p.axis == 0 ? 1L : p.axis == 1 ? long(g.nx) : long(g.nx) * long(g.ny);
  const long k = p.components;
  const float* line = p.in + k * (long(i) - long(at) * stride);
  double sum[3] = {0.0, 0.0, 0.0};
  for (int d = -p.radius; d <= p.radius; ++d) {
    const int j = min(max(at + d, 0), length - 1);
    const double w = p.taps[d < 0 ? -d : d];
    const float* u = line + k * long(j) * stride;
    for (int c = 0; c < p.components; ++c) sum[c] += w * double(u[c]);
  }
  for (int c = 0; c < p.components; ++c) p.out[k * i + c] = float(sum[c]);
}

__global__ void border_and_blend_kernel(float* vectors, const float* unsmoothed, const Grid g, const double weight) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz)) return;
  const Voxel v = voxel_of(i, g);
  const bool border = v.x == 0 || v.y == 0 || v.z == 0 || v.x == g.nx - 1 || v.y == g.ny - 1 || v.z == g.nz - 1;
  for (int c = 0; c < 3; ++c) {
    float& value = vectors[3 * i + c];
    if (border)
      value = 0.0f;
    else if (unsmoothed != nullptr)
      value = float(weight * value + (1.0 - weight) * unsmoothed[3 * i + c]);
    // weight 1: the reference computes 1 * v + 0 * unsmoothed = v
  }
}

struct InverseParams {
  DisplacementFieldView u;
  const float* current;
  float* next;
  double* partials;
};

// inverse.cpp's residual_and_next for one voxel, then a block's max and sum of the residuals.
__global__ void __launch_bounds__(kInverseBlock) inverse_pass_kernel(const InverseParams p) {
  __shared__ double largest[kInverseBlock], total[kInverseBlock];
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const Grid& g = p.u.geometry.dims;
  double r = 0.0;
  if (i < std::size_t(g.nx) * std::size_t(g.ny) * std::size_t(g.nz)) {
    const Voxel v = voxel_of(i, g);
    const Vec3 vi{p.current[3 * i], p.current[3 * i + 1], p.current[3 * i + 2]};
    const Vec3 pulled =
        regpipe_common::sample_displacement(p.u, regpipe_common::world_of_voxel(p.u.geometry, v.x, v.y, v.z) + vi);
    r = regpipe_common::norm(vi + pulled);
    p.next[3 * i] = float(-pulled.x);
    p.next[3 * i + 1] = float(-pulled.y);
    p.next[3 * i + 2] = float(-pulled.z);
  }
  largest[threadIdx.x] = r;
  total[threadIdx.x] = r;
  __syncthreads();
  for (int s = kInverseBlock / 2; s > 0; s /= 2) {
    if (int(threadIdx.x) < s) {
      largest[threadIdx.x] = fmax(largest[threadIdx.x], largest[threadIdx.x + s]);
      total[threadIdx.x] += total[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    p.partials[2 * blockIdx.x] = largest[0];
    p.partials[2 * blockIdx.x + 1] = total[0];
  }
}

__global__ void __launch_bounds__(kInverseBlock)
    reduce_residuals_kernel(const double* partials, const std::size_t blocks, double* totals) {
  __shared__ double largest[kInverseBlock], total[kInverseBlock];
  double m = 0.0, s = 0.0;
  for (std::size_t b = threadIdx.x; b < blocks; b += kInverseBlock) {
    m = fmax(m, partials[2 * b]);
    s += partials[2 * b + 1];
  }
  largest[threadIdx.x] = m;
  total[threadIdx.x] = s;
  __syncthreads();
  for (int k = kInverseBlock / 2; k > 0; k /= 2) {
    if (int(threadIdx.x) < k) {
      largest[threadIdx.x] = fmax(largest[threadIdx.x], largest[threadIdx.x + k]);
      total[threadIdx.x] += total[threadIdx.x + k];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    totals[0] = largest[0];
    totals[1] = total[0];
  }
}

__global__ void negate_kernel(float* values, const std::size_t count) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) values[i] = -values[i];
}

__global__ void threshold_mask_kernel(float* values, const std::size_t count) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) values[i] = values[i] >= 0.5f ? 1.0f : 0.0f;
}

struct NormParams {
  const float* vectors;
  std::size_t voxels;
  double w[16];  // world_to_voxel
  double* partials;
};

// syn_update.cpp's scale_to_step: the vector in the grid's index frame, its norm; per block the
// largest (sums 0, so the inversion's final reduction applies).
__global__ void __launch_bounds__(kInverseBlock) voxel_norm_maxima_kernel(const NormParams p) {
  __shared__ double largest[kInverseBlock];
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double r = 0.0;
  if (i < p.voxels) {
    const double* w = p.w;
    const Vec3 u{p.vectors[3 * i], p.vectors[3 * i + 1], p.vectors[3 * i + 2]};
    const Vec3 v{w[0] * u.x + w[1] * u.y + w[2] * u.z, w[4] * u.x + w[5] * u.y + w[6] * u.z,
                 w[8] * u.x + w[9] * u.y + w[10] * u.z};
    r = regpipe_common::norm(v);
  }
  largest[threadIdx.x] = r;
  __syncthreads();
  for (int s = kInverseBlock / 2; s > 0; s /= 2) {
    if (int(threadIdx.x) < s) largest[threadIdx.x] = fmax(largest[threadIdx.x], largest[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    p.partials[2 * blockIdx.x] = largest[0];
    p.partials[2 * blockIdx.x + 1] = 0.0;
  }
}

__global__ void scale_to_step_kernel(float* vectors, const std::size_t floats, const double* largest,
                                     const double step_voxels) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const double l = *largest;
  if (i < floats && l > 0.0) vectors[i] = float(vectors[i] * (step_voxels / l));
}

}  // namespace

void launch_negate(float* values, std::size_t count, cudaStream_t stream) {
  negate_kernel<<<blocks_for(count), kBlock, 0, stream>>>(values, count);
  RP_CUDA_CHECK_LAUNCH("negate_kernel");
}

void launch_threshold_mask(float* values, std::size_t count, cudaStream_t stream) {
  threshold_mask_kernel<<<blocks_for(count), kBlock, 0, stream>>>(values, count);
  RP_CUDA_CHECK_LAUNCH("threshold_mask_kernel");
}

void launch_voxel_norm_maxima(const float* vectors, std::size_t voxels, const double world_to_voxel[16],
                              double* partials, cudaStream_t stream) {
  NormParams p{vectors, voxels, {}, partials};
  for (int k = 0; k < 16; ++k) p.w[k] = world_to_voxel[k];
  voxel_norm_maxima_kernel<<<unsigned(inverse_pass_blocks(voxels)), kInverseBlock, 0, stream>>>(p);
  RP_CUDA_CHECK_LAUNCH("voxel_norm_maxima_kernel");
}

void launch_scale_to_step(float* vectors, std::size_t voxels, const double* largest, double step_voxels,
                          cudaStream_t stream) {
  scale_to_step_kernel<<<blocks_for(3 * voxels), kBlock, 0, stream>>>(vectors, 3 * voxels, largest, step_voxels);
  RP_CUDA_CHECK_LAUNCH("scale_to_step_kernel");
}

std::size_t inverse_pass_blocks(std::size_t voxels) { return (voxels + kInverseBlock - 1) / kInverseBlock; }

void launch_warp_image(const float* moving, Grid moving_dims, const double world_to_moving[16],
                       const DisplacementFieldView& field, const FieldGeometry& output, float background, float* out,
                       cudaStream_t stream) {
  WarpParams p{moving, moving_dims, {}, field, output, background, out};
  for (int k = 0; k < 16; ++k) p.world_to_moving[k] = world_to_moving[k];
  warp_image_kernel<<<blocks_for(count_of(output.dims)), kBlock, 0, stream>>>(p);
  RP_CUDA_CHECK_LAUNCH("warp_image_kernel");
}

void launch_compose(const DisplacementFieldView& first, const DisplacementFieldView& second, float* out,
                    cudaStream_t stream) {
  compose_kernel<<<blocks_for(count_of(first.geometry.dims)), kBlock, 0, stream>>>(ComposeParams{first, second, out});
  RP_CUDA_CHECK_LAUNCH("compose_kernel");
}

void launch_resample(const DisplacementFieldView& field, const FieldGeometry& geometry, float* out,
                     cudaStream_t stream) {
  resample_kernel<<<blocks_for(count_of(geometry.dims)), kBlock, 0, stream>>>(ResampleParams{field, geometry, out});
  RP_CUDA_CHECK_LAUNCH("resample_kernel");
}

void launch_smooth_axis(const SmoothAxisParams& params, cudaStream_t stream) {
  smooth_axis_kernel<<<blocks_for(count_of(params.dims)), kBlock, 0, stream>>>(params);
  RP_CUDA_CHECK_LAUNCH("smooth_axis_kernel");
}

void launch_ants_border_and_blend(float* vectors, const float* unsmoothed, Grid dims, double smoothed_weight,
                                  cudaStream_t stream) {
  border_and_blend_kernel<<<blocks_for(count_of(dims)), kBlock, 0, stream>>>(vectors, unsmoothed, dims,
                                                                             smoothed_weight);
  RP_CUDA_CHECK_LAUNCH("border_and_blend_kernel");
}

void launch_inverse_pass(const DisplacementFieldView& u, const float* current, float* next, double* partials,
                         cudaStream_t stream) {
  const std::size_t blocks = inverse_pass_blocks(count_of(u.geometry.dims));
  inverse_pass_kernel<<<unsigned(blocks), kInverseBlock, 0, stream>>>(InverseParams{u, current, next, partials});
  RP_CUDA_CHECK_LAUNCH("inverse_pass_kernel");
}

void launch_reduce_residuals(const double* partials, std::size_t blocks, double* totals, cudaStream_t stream) {
  reduce_residuals_kernel<<<1, kInverseBlock, 0, stream>>>(partials, blocks, totals);
  RP_CUDA_CHECK_LAUNCH("reduce_residuals_kernel");
}

}  // namespace regpipe_common_cuda::detail
