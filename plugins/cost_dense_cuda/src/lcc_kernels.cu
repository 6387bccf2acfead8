// cuda.lcc's kernels: ANTs' neighbourhood CC with a box window, the formulas of
// regpipe_common/dense_metrics/local_cc.hpp (read it first) in double on the device.
//
// One evaluation: the global weighted moments (one deterministic reduction), then by one of two
// schemes the six window sums of w, w f, w m, w f^2, w m^2, w f m (f, m centred on their global
// weighted means) and per voxel (correlate_voxel, lcc_voxel.cuh) the correlation, the cost's
// partial sums and ANTs' own-window gradient (or the four terms of the exact one, window-summed
// again by the single-array x, y and z passes here).
//   separable (ours, lcc_march.cu): one pass; a block per x-y tile marches along z with the
//     running window sums in shared memory, so the sums never reach global memory.
//   luo (Luo et al. 2015, PLoS ONE 10(9):e0136718, "GPU-accelerated CC calculation in
//     ANTs"): the images are bound to 3D textures (cudaArray, point sampling) and one thread
//     per voxel sums its own (2r+1)^3 window, O(r^3) per voxel. Luo et al. write m_I, m_J, A,
//     B, C to float surfaces and copy them back to ANTs; here the six sums stay in double
//     global memory and the same correlation as ours follows (1e-9 agreement with cpu.lcc
//     needs double).
#include "lcc_kernels.hpp"
#include "lcc_march.hpp"
#include "lcc_voxel.cuh"
#include "non_finite.cuh"
#include "reduce.cuh"

#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace regpipe::cost_dense_cuda {
namespace {

constexpr int kColumnSegment = 64;  // voxels per thread in the exact gradient's y and z passes

// One voxel's share of the moments.
__device__ __forceinline__ void add_moments(double v[kMomentCount], double wi, float fi, float mi, double f0,
                                            double m0) {
  const double df = fi - f0, dm = mi - m0;
  v[kStatW] += wi;
  v[kStatF] += wi * df;
  v[kStatM] += wi * dm;
  v[kStatFF] += wi * df * df;
  v[kStatMM] += wi * dm * dm;
}

__device__ __forceinline__ bool aligned16(const float* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// The global sums kStatW .. kStatMM (lcc_voxel.cuh), shifted by each image's first voxel;
// partials per block. Notes non-finite voxels of both images in `first` (if not null): the
// evaluation's check, in the one pass that reads them whole. Memory-bound: four voxels a load
// (float4, where the images are 16-byte aligned, as cudaMalloc gives them), so that enough bytes
// are in flight for the bandwidth.
__global__ void moments_kernel(const float* f, const float* m, const float* w, bool is_mask, std::size_t n,
                               double* partials, unsigned long long* first) {
  const double f0 = f[0], m0 = m[0];
  double v[kMomentCount] = {0, 0, 0, 0, 0};
  const std::size_t start = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t step = std::size_t(gridDim.x) * blockDim.x;
  const bool vector = aligned16(f) && aligned16(m) && (w == nullptr || aligned16(w));
  const std::size_t quads = vector ? n / 4 : 0;
  for (std::size_t q = start; q < quads; q += step) {
    const float4 fq = reinterpret_cast<const float4*>(f)[q], mq = reinterpret_cast<const float4*>(m)[q];
    const float4 wq = w != nullptr ? reinterpret_cast<const float4*>(w)[q] : make_float4(1.f, 1.f, 1.f, 1.f);
    const float fs[4] = {fq.x, fq.y, fq.z, fq.w}, ms[4] = {mq.x, mq.y, mq.z, mq.w}, ws[4] = {wq.x, wq.y, wq.z, wq.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (first != nullptr) note_non_finite(fs[k], ms[k], 4 * q + k, first);
      add_moments(v, w != nullptr ? weight_value(ws[k], is_mask) : 1.0, fs[k], ms[k], f0, m0);
    }
  }
  for (std::size_t i = 4 * quads + start; i < n; i += step) {
    const float fi = f[i], mi = m[i];
    if (first != nullptr) note_non_finite(fi, mi, i, first);
    add_moments(v, weight_of(w, is_mask, i), fi, mi, f0, m0);
  }
  for (int k = 0; k < kMomentCount; ++k) {
    v[k] = block_sum(v[k]);
    if (threadIdx.x == 0) partials[std::size_t(blockIdx.x) * kMomentCount + k] = v[k];
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
                                  bool weighted, bool is_mask, const double* stats, VoxelArgs a, int radius,
                                  double* sums) {
  const Dims d = a.d;
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
  if (x >= d.nx || y >= d.ny) return;
  const Moments s = moments_of(stats, a);
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

// Luo's correlation pass: correlate_voxel over the six window sums in `sums` (6 arrays of n);
// the block's share of sum w rho2 into partials[blockIdx.x].
__global__ void correlate_kernel(VoxelArgs a, const double* stats, const double* sums, double* terms,
                                 double* partials) {
  const Moments s = moments_of(stats, a);
  const std::size_t n = a.d.n;
  double weighted_rho2 = 0.0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    double v[kSums];
    for (int k = 0; k < kSums; ++k) v[k] = sums[k * n + i];
    long at[3];
    voxel_at(a.d, i, at);
    weighted_rho2 += correlate_voxel(a, s, v, at, i, terms);
  }
  weighted_rho2 = block_sum(weighted_rho2);
  if (threadIdx.x == 0) partials[blockIdx.x] = weighted_rho2;
}

// The exact gradient from the window sums of the four terms.
__global__ void exact_gradient_kernel(VoxelArgs a, const double* stats, const double* terms) {
  const Moments s = moments_of(stats, a);
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
    write_world_gradient<float>(a, i, d_cost_d_m);
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

std::size_t lcc_workspace_bytes(std::size_t voxels, WindowScheme scheme, bool exact, bool weighted) {
  const std::size_t partials = std::size_t(kMaxReduceBlocks) * kMomentCount * sizeof(double);
  if (scheme == WindowScheme::separable)  // the exact gradient's terms and their y pass
    return partials + (exact ? 2 * std::size_t(kExactTerms) * voxels * sizeof(double) : 0);
  return partials + std::size_t(kSums) * voxels * sizeof(double) + (weighted ? 3 : 2) * voxels * sizeof(float);
}

void run_local_cc(const LccProblem& p, LccWorkspace& ws, int sm_count, std::size_t shared_optin, cudaStream_t stream,
                  double* cost_out) {
  const Dims d = dims_of(p);
  const int threads = p.threads_per_block;
  const bool separable = p.scheme == WindowScheme::separable;
  const bool exact = p.gradient_out != nullptr && p.exact && separable;
  if (exact) {
    const std::size_t bytes = x_pass_shared_bytes(p.nx);
    if (bytes > shared_optin)
      throw rp::Error(RP_UNSUPPORTED, "cuda.lcc gradient=exact holds an x-line in shared memory: nx=" +
                                          std::to_string(p.nx) + " needs " + std::to_string(bytes) +
                                          " bytes, the device allows " + std::to_string(shared_optin) +
                                          "; use gradient=ants or cpu.lcc");
    if (bytes > 48 * 1024) set_shared_limit(reinterpret_cast<const void*>(&box_x_kernel), bytes);
  }
  const int blocks = reduce_blocks(d.n, threads);
  const int key[6] = {p.nx, p.ny, p.nz, p.radius, threads, p.weight != nullptr};
  if (separable && !std::equal(key, key + 6, ws.march_key)) {
    ws.march = plan_lcc_march(d, p.radius, p.weight != nullptr, threads, sm_count, shared_optin);
    std::copy(key, key + 6, ws.march_key);
  }
  const MarchLaunch& march = ws.march;
  ws.stats.ensure(kStatCount);
  ws.partials.ensure(std::max(std::size_t(kMaxReduceBlocks) * kMomentCount, separable ? march.blocks() : 0));
  if (!separable) ws.sums_a.ensure(kSums * d.n);
  if (exact) {
    ws.sums_a.ensure(kExactTerms * d.n);
    ws.sums_b.ensure(kExactTerms * d.n);
  }

  // Global moments.
  moments_kernel<<<blocks, threads, 0, stream>>>(p.fixed, p.moving, p.weight, p.weight_is_mask, d.n,
                                                 ws.partials.get(), p.first_non_finite);
  RP_CUDA_CHECK_LAUNCH("moments_kernel");
  finish_sums<<<kMomentCount, 256, 0, stream>>>(ws.partials.get(), blocks, kMomentCount, ws.stats.get() + kStatW);
  RP_CUDA_CHECK_LAUNCH("finish_sums");

  // The window sums, the correlation, the cost's partial sums and the gradient (or the exact
  // gradient's terms, in b).
  double* a = ws.sums_a.get();
  double* b = ws.sums_b.get();
  const VoxelArgs args = voxel_args(p);
  double* terms = exact ? b : nullptr;
  std::size_t partial_count = std::size_t(blocks);
  if (separable) {
    launch_lcc_march(march, args, ws.stats.get(), terms, ws.partials.get(), p.radius, stream);
    partial_count = march.blocks();
  } else {
    bind_textures(p, ws, stream);
    const int rows_per_block = std::max(1, threads / 32);
    const dim3 grid(unsigned((p.nx + 31) / 32), unsigned((p.ny + rows_per_block - 1) / rows_per_block), unsigned(p.nz));
    luo_window_kernel<<<grid, dim3(32, unsigned(rows_per_block)), 0, stream>>>(
        ws.textures[0], ws.textures[1], ws.textures[2], p.weight != nullptr, p.weight_is_mask, ws.stats.get(), args,
        p.radius, a);
    RP_CUDA_CHECK_LAUNCH("luo_window_kernel");
    correlate_kernel<<<blocks, threads, 0, stream>>>(args, ws.stats.get(), a, terms, ws.partials.get());
    RP_CUDA_CHECK_LAUNCH("correlate_kernel");
  }
  finish_sums<<<1, 256, 0, stream>>>(ws.partials.get(), int(partial_count), 1, ws.stats.get() + kStatRho);
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
