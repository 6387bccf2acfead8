// cuda.lcc's kernels: ANTs' neighbourhood CC with a box window, the formulas of
// regpipe_common/dense_metrics/local_cc.hpp (read it first) in double on the device.
//
// One evaluation: the global weighted moments (two deterministic reductions), the six window
// sums of w, w f, w m, w f^2, w m^2, w f m (f, m centred on their global weighted means) by
// one of two schemes, then per voxel (correlate_voxel) the correlation, the cost's partial sums
// and ANTs' own-window gradient (or the four terms of the exact one, window-summed again by
// the single-array x, y and z passes).
//   separable (ours): two passes over the six sums. xy: a block per x-tile of a row segment
//     of one z-plane loads each row's f, m, w (with the radius' halo) into shared memory, takes
//     the x-window sums of the six products there and slides a running y-window sum of them
//     in registers (a thread per x), writing the xy sums (coalesced); z: a thread per column
//     segment of 64 voxels slides a running z-window sum in registers and, at each voxel, turns
//     the six sums into the correlation, the cost's partial sum and the gradient at once (no
//     second read of the sums). Work per voxel grows with the radius only in the x-window sums
//     (2r+1 shared-memory reads) and the segments' start-up windows.
//   luo (Luo et al. 2015, PLoS ONE 10(9):e0136718, "GPU-accelerated CC calculation in
//     ANTs"): the images are bound to 3D textures (cudaArray, point sampling) and one thread
//     per voxel sums its own (2r+1)^3 window, O(r^3) per voxel. Luo et al. write m_I, m_J, A,
//     B, C to float surfaces and copy them back to ANTs; here the six sums stay in double
//     global memory and the same correlation kernel as ours follows (1e-9 agreement with
//     cpu.lcc needs double).
#include "dense_voxels.cuh"
#include "lcc_kernels.hpp"
#include "reduce.cuh"

#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>
#include <string>

namespace regpipe::cost_dense_cuda {
namespace {

// The global sums in workspace.stats.
enum { kStatW, kStatF, kStatM, kStatVarF, kStatVarM, kStatRho, kStatCount };
// The window sums, in this order, N doubles each.
enum { kSumW, kSumF, kSumM, kSumFF, kSumMM, kSumFM, kSums };
constexpr int kExactTerms = 4;
constexpr int kColumnSegment = 64;  // voxels per thread in the y and z passes
constexpr int kRowSegment = 32;     // rows per block in the xy pass
// Same as regpipe_common::dense_metrics::kFlatWindowVarianceFraction (local_cc.hpp, C++20).
constexpr double kFlatWindowVarianceFraction = 1e-10;

struct Moments {
  double total_weight, fixed_mean, moving_mean, fixed_variance, moving_variance;
};

__device__ __forceinline__ Moments moments_of(const double* stats) {
  Moments m;
  m.total_weight = stats[kStatW];
  const bool any = m.total_weight > 0.0;
  m.fixed_mean = any ? stats[kStatF] / m.total_weight : 0.0;
  m.moving_mean = any ? stats[kStatM] / m.total_weight : 0.0;
  m.fixed_variance = any ? stats[kStatVarF] / m.total_weight : 0.0;
  m.moving_variance = any ? stats[kStatVarM] / m.total_weight : 0.0;
  return m;
}

// acc[k] += the six window products of one voxel (weight w, centred values f and m).
__device__ __forceinline__ void add_products(double acc[kSums], double w, double f, double m) {
  acc[kSumW] += w;
  acc[kSumF] += w * f;
  acc[kSumM] += w * m;
  acc[kSumFF] += w * f * f;
  acc[kSumMM] += w * m * m;
  acc[kSumFM] += w * f * m;
}

// Pass 1: sum w, w f, w m; pass 2: sum w (f - fmean)^2, w (m - mmean)^2. Partials per block.
template <int kPass>
__global__ void moments_kernel(const float* f, const float* m, const float* w, bool is_mask, std::size_t n,
                               const double* stats, double* partials) {
  double a = 0.0, b = 0.0, c = 0.0;
  double fmean = 0.0, mmean = 0.0;
  if (kPass == 2) {
    const Moments s = moments_of(stats);
    fmean = s.fixed_mean;
    mmean = s.moving_mean;
  }
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double wi = weight_of(w, is_mask, i);
    if (kPass == 1) {
      a += wi;
      b += wi * f[i];
      c += wi * m[i];
    } else {
      const double df = f[i] - fmean, dm = m[i] - mmean;
      a += wi * df * df;
      b += wi * dm * dm;
    }
  }
  constexpr int kCount = kPass == 1 ? 3 : 2;
  a = block_sum(a);
  b = block_sum(b);
  if (kPass == 1) c = block_sum(c);
  if (threadIdx.x == 0) {
    partials[std::size_t(blockIdx.x) * kCount + 0] = a;
    partials[std::size_t(blockIdx.x) * kCount + 1] = b;
    if (kPass == 1) partials[std::size_t(blockIdx.x) * kCount + 2] = c;
  }
}

// p[0, n) <- its inclusive prefix sums (in shared memory, the whole block), then
// out[i] = sum of the inputs j with |j - i| <= radius, 0 <= j < n.
__device__ void scan_and_box(double* p, int n, int radius, double* out) {
  __shared__ double warp_totals[32];
  const int t = threadIdx.x, threads = blockDim.x;
  const int segment = (n + threads - 1) / threads;
  const int lo = min(t * segment, n), hi = min(lo + segment, n);
  double run = 0.0;
  for (int i = lo; i < hi; ++i) {
    run += p[i];
    p[i] = run;
  }
  // Exclusive scan of the threads' totals: within each warp, then over the warps.
  const int lane = t & 31, warp = t >> 5, warps = (threads + 31) >> 5;
  double inclusive = run;
  for (int o = 1; o < 32; o <<= 1) {
    const double v = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += v;
  }
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    double v = lane < warps ? warp_totals[lane] : 0.0;
    for (int o = 1; o < 32; o <<= 1) {
      const double u = __shfl_up_sync(0xffffffffu, v, o);
      if (lane >= o) v += u;
    }
    if (lane < warps) warp_totals[lane] = v;
  }
  __syncthreads();
  const double offset = inclusive - run + (warp > 0 ? warp_totals[warp - 1] : 0.0);
  for (int i = lo; i < hi; ++i) p[i] += offset;
  __syncthreads();
  for (int i = t; i < n; i += threads) {
    const int last = min(i + radius, n - 1), before = i - radius - 1;
    out[i] = p[last] - (before >= 0 ? p[before] : 0.0);
  }
  __syncthreads();  // p and warp_totals are reused by the next line
}

// The x pass of array blockIdx.y of `in` into the same of `out`, a block per x-line
// (blockIdx.x = y + ny z); in place allowed: the line is read whole before it is written.
__global__ void box_x_kernel(const double* in, double* out, Dims d, int radius) {
  extern __shared__ double prefix[];
  const std::size_t offset = blockIdx.y * d.n + std::size_t(blockIdx.x) * d.nx;
  for (int i = threadIdx.x; i < d.nx; i += blockDim.x) prefix[i] = in[offset + i];
  __syncthreads();
  scan_and_box(prefix, d.nx, radius, out + offset);
}

// Row (y, z) of w, f - fmean, m - mmean for x in [x0 - radius, x0 + blockDim.x + radius) into
// row[0, 3 span) (three arrays of span values), zeros outside the grid.
__device__ void load_row(const float* f, const float* m, const float* w, bool is_mask, const Moments& s, Dims d,
                         int x0, int y, int z, int radius, double* row) {
  const int span = int(blockDim.x) + 2 * radius;
  const std::size_t base = (std::size_t(z) * d.ny + y) * d.nx;
  for (int k = threadIdx.x; k < span; k += blockDim.x) {
    const int x = x0 - radius + k;
    const bool inside = x >= 0 && x < d.nx;
    row[k] = inside ? weight_of(w, is_mask, base + x) : 0.0;
    row[span + k] = inside ? double(f[base + x]) - s.fixed_mean : 0.0;
    row[2 * span + k] = inside ? double(m[base + x]) - s.moving_mean : 0.0;
  }
}

// sums[k] += sign * the x-window sum of product k of a loaded row at the thread's x.
__device__ __forceinline__ void add_x_window(const double* row, int radius, double sign, double sums[kSums]) {
  const int span = int(blockDim.x) + 2 * radius;
  double acc[kSums] = {0, 0, 0, 0, 0, 0};
  for (int k = threadIdx.x; k <= int(threadIdx.x) + 2 * radius; ++k) {
    add_products(acc, row[k], row[span + k], row[2 * span + k]);
  }
  for (int k = 0; k < kSums; ++k) sums[k] += sign * acc[k];
}

// The xy pass: the x- and y-window sums of the six products into out's six arrays. A block per
// (x-tile, segment of kRowSegment rows, z); a thread per x keeps the running y-window sums.
// Shared memory: xy_pass_shared_bytes.
__global__ void box_xy_kernel(const float* f, const float* m, const float* w, bool is_mask, const double* stats,
                              double* out, Dims d, int radius) {
  extern __shared__ double rows[];
  double* entering = rows;
  double* leaving = rows + 3 * (int(blockDim.x) + 2 * radius);
  const Moments s = moments_of(stats);
  const int x0 = int(blockIdx.x * blockDim.x), x = x0 + int(threadIdx.x), z = int(blockIdx.z);
  const int begin = int(blockIdx.y) * kRowSegment, end = min(begin + kRowSegment, d.ny);
  double sums[kSums] = {0, 0, 0, 0, 0, 0};
  for (int j = max(begin - radius, 0); j <= min(begin + radius, d.ny - 1); ++j) {
    load_row(f, m, w, is_mask, s, d, x0, j, z, radius, entering);
    __syncthreads();
    add_x_window(entering, radius, 1.0, sums);
    __syncthreads();
  }
  for (int y = begin;; ++y) {
    if (x < d.nx) {
      const std::size_t i = (std::size_t(z) * d.ny + y) * d.nx + x;
      for (int k = 0; k < kSums; ++k) out[k * d.n + i] = sums[k];
    }
    if (y + 1 == end) break;
    const bool add = y + radius + 1 < d.ny, drop = y - radius >= 0;  // the same in the whole block
    if (add) load_row(f, m, w, is_mask, s, d, x0, y + radius + 1, z, radius, entering);
    if (drop) load_row(f, m, w, is_mask, s, d, x0, y - radius, z, radius, leaving);
    __syncthreads();
    if (add) add_x_window(entering, radius, 1.0, sums);
    if (drop) add_x_window(leaving, radius, -1.0, sums);
    __syncthreads();
  }
}

// The y (axis 1) or z (axis 2) pass of array blockIdx.y: a thread per segment of a column,
// a running window sum along it. in and out differ.
__global__ void box_column_kernel(const double* in, double* out, Dims d, int axis, int radius) {
  const int length = axis == 1 ? d.ny : d.nz;
  const std::size_t columns = axis == 1 ? std::size_t(d.nx) * d.nz : std::size_t(d.nx) * d.ny;
  const std::size_t segments = (std::size_t(length) + kColumnSegment - 1) / kColumnSegment;
  const std::size_t id = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= columns * segments) return;
  const std::size_t column = id % columns;
  const int segment = int(id / columns);
  std::size_t base, stride;
  if (axis == 1) {
    base = column % d.nx + column / d.nx * std::size_t(d.nx) * d.ny;
    stride = std::size_t(d.nx);
  } else {
    base = column;
    stride = std::size_t(d.nx) * d.ny;
  }
  const double* src = in + blockIdx.y * d.n + base;
  double* dst = out + blockIdx.y * d.n + base;
  const int begin = segment * kColumnSegment, end = min(begin + kColumnSegment, length);
  double sum = 0.0;
  for (int j = max(begin - radius, 0); j <= min(begin + radius, length - 1); ++j) sum += src[j * stride];
  for (int i = begin; i < end; ++i) {
    dst[i * stride] = sum;
    if (i + radius + 1 < length) sum += src[(i + radius + 1) * stride];
    if (i - radius >= 0) sum -= src[(i - radius) * stride];
  }
}

// Luo et al.'s kernel: a thread per voxel (x, y from a 2D block, z = blockIdx.z) sums its own
// window, clipped at the grid's faces, from the textures.
__global__ void luo_window_kernel(cudaTextureObject_t fixed, cudaTextureObject_t moving, cudaTextureObject_t weight,
                                  bool weighted, bool is_mask, const double* stats, Dims d, int radius,
                                  double* sums) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
  if (x >= d.nx || y >= d.ny) return;
  const Moments s = moments_of(stats);
  double acc[kSums] = {0, 0, 0, 0, 0, 0};
  for (int zz = max(z - radius, 0); zz <= min(z + radius, d.nz - 1); ++zz)
    for (int yy = max(y - radius, 0); yy <= min(y + radius, d.ny - 1); ++yy)
      for (int xx = max(x - radius, 0); xx <= min(x + radius, d.nx - 1); ++xx) {
        const float u = float(xx) + 0.5f, v = float(yy) + 0.5f, t = float(zz) + 0.5f;
        double w = 1.0;
        if (weighted) {
          const float wv = tex3D<float>(weight, u, v, t);
          w = is_mask ? (wv > 0.f ? 1.0 : 0.0) : double(wv);
        }
        const double fi = tex3D<float>(fixed, u, v, t) - s.fixed_mean;
        const double mi = tex3D<float>(moving, u, v, t) - s.moving_mean;
        add_products(acc, w, fi, mi);
      }
  const std::size_t i = std::size_t(x) + std::size_t(d.nx) * (std::size_t(y) + std::size_t(d.ny) * z);
  for (int k = 0; k < kSums; ++k) sums[k * d.n + i] = acc[k];
}

// Voxel i from its six window sums: ANTs' gradient into a.gradient_out (if asked), or the exact
// gradient's four terms into `terms` (4 arrays of n, if not null), which the exact gradient
// then window-sums. Returns w rho2, the voxel's share of the cost.
__device__ __forceinline__ double correlate_voxel(const VoxelArgs& a, const Moments& s, const double sums[kSums],
                                                  std::size_t i, double* terms) {
  const std::size_t n = a.d.n;
  const double w = weight_of(a.weight, a.weight_is_mask, i);
  if (!(w > 0.0)) {
    if (terms != nullptr) {
      for (int k = 0; k < kExactTerms; ++k) terms[k * n + i] = 0.0;
    } else if (a.gradient_out != nullptr) {
      write_zero_gradient(a, i);
    }
    return 0.0;
  }
  const double window = sums[kSumW], sf = sums[kSumF], sm = sums[kSumM];
  const double fbar = sf / window, mbar = sm / window;
  const double cross = sums[kSumFM] - fbar * sm;
  const double fixed_ss = sums[kSumFF] - fbar * sf;
  const double moving_ss = sums[kSumMM] - mbar * sm;
  // window_correlation (local_cc.hpp)
  const bool flat = !(fixed_ss > kFlatWindowVarianceFraction * window * s.fixed_variance) ||
                    !(moving_ss > kFlatWindowVarianceFraction * window * s.moving_variance);
  const double rho2 = flat ? 1.0 : cross * cross / (fixed_ss * moving_ss);
  const double alpha = flat ? 0.0 : 2.0 * cross / (fixed_ss * moving_ss);
  const double beta = flat ? 0.0 : cross / moving_ss;
  if (terms != nullptr) {
    terms[0 * n + i] = w * alpha;
    terms[1 * n + i] = w * alpha * fbar;
    terms[2 * n + i] = w * alpha * beta;
    terms[3 * n + i] = w * alpha * beta * mbar;
  } else if (a.gradient_out != nullptr) {
    const double f = a.fixed[i] - s.fixed_mean, m = a.moving[i] - s.moving_mean;
    const double d_cost_d_m = -(w * w / s.total_weight) * alpha * ((f - fbar) - beta * (m - mbar));
    write_world_gradient(a, i, d_cost_d_m);
  }
  return w * rho2;
}

// Luo's correlation pass: correlate_voxel over the six window sums in `sums` (6 arrays of n);
// the block's share of sum w rho2 into partials[blockIdx.x].
__global__ void correlate_kernel(VoxelArgs a, const double* stats, const double* sums, double* terms,
                                 double* partials) {
  const Moments s = moments_of(stats);
  const std::size_t n = a.d.n;
  double weighted_rho2 = 0.0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    double v[kSums];
    for (int k = 0; k < kSums; ++k) v[k] = sums[k * n + i];
    weighted_rho2 += correlate_voxel(a, s, v, i, terms);
  }
  weighted_rho2 = block_sum(weighted_rho2);
  if (threadIdx.x == 0) partials[blockIdx.x] = weighted_rho2;
}

// The separable scheme's z pass fused with the correlation: a thread per segment of
// kColumnSegment voxels of a z-column slides the running z-window sums of the xy sums (6 arrays
// of n) and calls correlate_voxel at each voxel; the block's share of sum w rho2 into
// partials[blockIdx.x].
__global__ void box_z_correlate_kernel(VoxelArgs a, const double* stats, const double* xy, double* terms,
                                       double* partials, int radius) {
  const Moments s = moments_of(stats);
  const Dims d = a.d;
  const std::size_t plane = std::size_t(d.nx) * d.ny;
  const std::size_t segments = (std::size_t(d.nz) + kColumnSegment - 1) / kColumnSegment;
  const std::size_t id = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double weighted_rho2 = 0.0;
  if (id < plane * segments) {  // no early return: the whole block takes part in block_sum
    const std::size_t column = id % plane;
    const int begin = int(id / plane) * kColumnSegment, end = min(begin + kColumnSegment, d.nz);
    double sums[kSums] = {0, 0, 0, 0, 0, 0};
    for (int j = max(begin - radius, 0); j <= min(begin + radius, d.nz - 1); ++j)
      for (int k = 0; k < kSums; ++k) sums[k] += xy[k * d.n + column + j * plane];
    for (int z = begin; z < end; ++z) {
      weighted_rho2 += correlate_voxel(a, s, sums, column + z * plane, terms);
      if (z + radius + 1 < d.nz)
        for (int k = 0; k < kSums; ++k) sums[k] += xy[k * d.n + column + (z + radius + 1) * plane];
      if (z - radius >= 0)
        for (int k = 0; k < kSums; ++k) sums[k] -= xy[k * d.n + column + (z - radius) * plane];
    }
  }
  weighted_rho2 = block_sum(weighted_rho2);
  if (threadIdx.x == 0) partials[blockIdx.x] = weighted_rho2;
}

// The exact gradient from the window sums of the four terms.
__global__ void exact_gradient_kernel(VoxelArgs a, const double* stats, const double* terms) {
  const Moments s = moments_of(stats);
  const std::size_t n = a.d.n;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double w = weight_of(a.weight, a.weight_is_mask, i);
    if (!(w > 0.0)) {
      write_zero_gradient(a, i);
      continue;
    }
    const double f = a.fixed[i] - s.fixed_mean, m = a.moving[i] - s.moving_mean;
    const double d_cost_d_m = -(w / s.total_weight) *
                              (f * terms[0 * n + i] - terms[1 * n + i] - m * terms[2 * n + i] + terms[3 * n + i]);
    write_world_gradient(a, i, d_cost_d_m);
  }
}

// cost = -(1 / W) sum w rho2, 0 without weight (kWorstLocalCcCost).
__global__ void finish_cost_kernel(const double* stats, double* cost_out) {
  const double total = stats[kStatW];
  *cost_out = total > 0.0 ? -stats[kStatRho] / total : 0.0;
}

// Window sums of `count` arrays in `a` (x in place), through `b` for y, back to `a` for z.
void separable_box_sums(double* a, double* b, int count, Dims d, int radius, int threads, cudaStream_t stream) {
  const int x_threads = std::min(threads, std::max(32, (d.nx + 31) / 32 * 32));
  const std::size_t rows = std::size_t(d.ny) * d.nz;
  box_x_kernel<<<dim3(unsigned(rows), unsigned(count)), x_threads, x_pass_shared_bytes(d.nx), stream>>>(a, a, d,
                                                                                                     radius);
  RP_CUDA_CHECK_LAUNCH("box_x_kernel");
  for (int axis = 1; axis <= 2; ++axis) {
    const int length = axis == 1 ? d.ny : d.nz;
    const std::size_t columns = axis == 1 ? std::size_t(d.nx) * d.nz : std::size_t(d.nx) * d.ny;
    const std::size_t items = columns * ((std::size_t(length) + kColumnSegment - 1) / kColumnSegment);
    box_column_kernel<<<dim3(unsigned((items + threads - 1) / threads), unsigned(count)), threads, 0, stream>>>(
        axis == 1 ? a : b, axis == 1 ? b : a, d, axis, radius);
    RP_CUDA_CHECK_LAUNCH("box_column_kernel");
  }
}

void set_shared_limit(const void* kernel, std::size_t bytes) {
  RP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

cudaTextureObject_t make_texture(cudaArray_t array) {
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaTextureDesc texture{};
  for (int a = 0; a < 3; ++a) texture.addressMode[a] = cudaAddressModeClamp;
  texture.filterMode = cudaFilterModePoint;
  texture.readMode = cudaReadModeElementType;
  texture.normalizedCoords = 0;
  cudaTextureObject_t object = 0;
  RP_CUDA_CHECK(cudaCreateTextureObject(&object, &resource, &texture, nullptr));
  return object;
}

// Luo's textures for the images of `p` (3D arrays reused while the grid stays the same).
void bind_textures(const LccProblem& p, LccWorkspace& ws, cudaStream_t stream) {
  if (ws.array_dims[0] != p.nx || ws.array_dims[1] != p.ny || ws.array_dims[2] != p.nz || ws.arrays[0] == nullptr) {
    ws.release_textures();
    const cudaChannelFormatDesc channel = cudaCreateChannelDesc<float>();
    for (int k = 0; k < 3; ++k) {
      RP_CUDA_CHECK(cudaMalloc3DArray(&ws.arrays[k], &channel, make_cudaExtent(p.nx, p.ny, p.nz)));
      ws.textures[k] = make_texture(ws.arrays[k]);
    }
    ws.array_dims[0] = p.nx;
    ws.array_dims[1] = p.ny;
    ws.array_dims[2] = p.nz;
  }
  const float* images[3] = {p.fixed, p.moving, p.weight};
  for (int k = 0; k < 3; ++k) {
    if (images[k] == nullptr) continue;
    cudaMemcpy3DParms copy{};
    copy.srcPtr = make_cudaPitchedPtr(const_cast<float*>(images[k]), std::size_t(p.nx) * sizeof(float),
                                      std::size_t(p.nx), std::size_t(p.ny));
    copy.dstArray = ws.arrays[k];
    copy.extent = make_cudaExtent(p.nx, p.ny, p.nz);
    copy.kind = cudaMemcpyDeviceToDevice;
    RP_CUDA_CHECK(cudaMemcpy3DAsync(&copy, stream));
  }
}

}  // namespace

LccWorkspace::~LccWorkspace() { release_textures(); }

void LccWorkspace::release_textures() {
  for (int k = 0; k < 3; ++k) {
    if (textures[k] != 0) cudaDestroyTextureObject(textures[k]);
    if (arrays[k] != nullptr) cudaFreeArray(arrays[k]);
    textures[k] = 0;
    arrays[k] = nullptr;
  }
  array_dims[0] = array_dims[1] = array_dims[2] = 0;
}

std::size_t x_pass_shared_bytes(int nx) { return std::size_t(nx) * sizeof(double); }

std::size_t xy_pass_shared_bytes(int threads, int radius) {
  return std::size_t(2 * 3) * std::size_t(threads + 2 * radius) * sizeof(double);
}

std::size_t lcc_workspace_bytes(std::size_t voxels, WindowScheme scheme, bool weighted) {
  const std::size_t sums = std::size_t(kSums) * voxels * sizeof(double);
  if (scheme == WindowScheme::separable) return 2 * sums;
  return sums + (weighted ? 3 : 2) * voxels * sizeof(float);
}

void run_local_cc(const LccProblem& p, LccWorkspace& ws, int sm_count, std::size_t shared_optin, cudaStream_t stream,
                  double* cost_out) {
  (void)sm_count;
  const Dims d = dims_of(p);
  const int threads = p.threads_per_block;
  const bool separable = p.scheme == WindowScheme::separable;
  const bool want_gradient = p.gradient_out != nullptr;
  const bool exact = want_gradient && p.exact && separable;
  const int xy_threads = std::min(threads, std::max(32, (p.nx + 31) / 32 * 32));
  if (separable) {
    const std::size_t bytes = xy_pass_shared_bytes(xy_threads, p.radius);
    if (bytes > 48 * 1024) set_shared_limit(reinterpret_cast<const void*>(&box_xy_kernel), bytes);
  }
  if (exact) {
    const std::size_t bytes = x_pass_shared_bytes(p.nx);
    if (bytes > shared_optin)
      throw rp::Error(RP_UNSUPPORTED, "cuda.lcc gradient=exact holds an x-line in shared memory: nx=" +
                                          std::to_string(p.nx) + " needs " + std::to_string(bytes) +
                                          " bytes, the device allows " + std::to_string(shared_optin) +
                                          "; use gradient=ants or cpu.lcc");
    if (bytes > 48 * 1024) set_shared_limit(reinterpret_cast<const void*>(&box_x_kernel), bytes);
  }
  // The fused z pass writes a partial sum per block: more blocks than a grid-stride reduction.
  const std::size_t z_items = std::size_t(p.nx) * p.ny * ((std::size_t(p.nz) + kColumnSegment - 1) / kColumnSegment);
  const std::size_t z_blocks = (z_items + threads - 1) / threads;
  ws.stats.ensure(kStatCount);
  ws.partials.ensure(std::max(std::size_t(kMaxReduceBlocks) * 3, separable ? z_blocks : 0));
  ws.sums_a.ensure(kSums * d.n);
  if (exact) ws.sums_b.ensure(kSums * d.n);

  // Global moments.
  const int blocks = reduce_blocks(d.n, threads);
  moments_kernel<1><<<blocks, threads, 0, stream>>>(p.fixed, p.moving, p.weight, p.weight_is_mask, d.n, nullptr,
                                                     ws.partials.get());
  RP_CUDA_CHECK_LAUNCH("moments_kernel<1>");
  finish_sums<<<3, 256, 0, stream>>>(ws.partials.get(), blocks, 3, ws.stats.get() + kStatW);
  RP_CUDA_CHECK_LAUNCH("finish_sums");
  moments_kernel<2><<<blocks, threads, 0, stream>>>(p.fixed, p.moving, p.weight, p.weight_is_mask, d.n,
                                                     ws.stats.get(), ws.partials.get());
  RP_CUDA_CHECK_LAUNCH("moments_kernel<2>");
  finish_sums<<<2, 256, 0, stream>>>(ws.partials.get(), blocks, 2, ws.stats.get() + kStatVarF);
  RP_CUDA_CHECK_LAUNCH("finish_sums");

  // The window sums (separable: x and y only, z in the correlation pass), into sums_a; then the
  // correlation, the cost's partial sums and the gradient (or the exact gradient's terms, in b).
  double* a = ws.sums_a.get();
  double* b = ws.sums_b.get();
  const VoxelArgs args = voxel_args(p);
  double* terms = exact ? b : nullptr;
  int partial_count = blocks;
  if (separable) {
    const dim3 grid(unsigned((p.nx + xy_threads - 1) / xy_threads), unsigned((p.ny + kRowSegment - 1) / kRowSegment),
                    unsigned(p.nz));
    box_xy_kernel<<<grid, xy_threads, xy_pass_shared_bytes(xy_threads, p.radius), stream>>>(
        p.fixed, p.moving, p.weight, p.weight_is_mask, ws.stats.get(), a, d, p.radius);
    RP_CUDA_CHECK_LAUNCH("box_xy_kernel");
    partial_count = int(z_blocks);
    box_z_correlate_kernel<<<unsigned(z_blocks), threads, 0, stream>>>(args, ws.stats.get(), a, terms,
                                                                        ws.partials.get(), p.radius);
    RP_CUDA_CHECK_LAUNCH("box_z_correlate_kernel");
  } else {
    bind_textures(p, ws, stream);
    const int rows_per_block = std::max(1, threads / 32);
    const dim3 grid(unsigned((p.nx + 31) / 32), unsigned((p.ny + rows_per_block - 1) / rows_per_block), unsigned(p.nz));
    luo_window_kernel<<<grid, dim3(32, unsigned(rows_per_block)), 0, stream>>>(
        ws.textures[0], ws.textures[1], ws.textures[2], p.weight != nullptr, p.weight_is_mask, ws.stats.get(), d,
        p.radius, a);
    RP_CUDA_CHECK_LAUNCH("luo_window_kernel");
    correlate_kernel<<<blocks, threads, 0, stream>>>(args, ws.stats.get(), a, terms, ws.partials.get());
    RP_CUDA_CHECK_LAUNCH("correlate_kernel");
  }
  finish_sums<<<1, 256, 0, stream>>>(ws.partials.get(), partial_count, 1, ws.stats.get() + kStatRho);
  RP_CUDA_CHECK_LAUNCH("finish_sums");
  if (exact) {
    // The terms in b: x in place, y into a, z back into b.
    separable_box_sums(b, a, kExactTerms, d, p.radius, threads, stream);
    exact_gradient_kernel<<<blocks, threads, 0, stream>>>(args, ws.stats.get(), b);
    RP_CUDA_CHECK_LAUNCH("exact_gradient_kernel");
  }
  finish_cost_kernel<<<1, 1, 0, stream>>>(ws.stats.get(), cost_out);
  RP_CUDA_CHECK_LAUNCH("finish_cost_kernel");
}

}  // namespace regpipe::cost_dense_cuda
