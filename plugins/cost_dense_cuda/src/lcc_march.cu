// cuda.lcc's separable scheme in one pass: the window sums of w, w f, w m, w f^2, w m^2, w f m
// (f, m centred on their global weighted means; without a weight image w is 1 and the window's
// weight its count of voxels inside the grid, so five sums) and, at each voxel, the
// correlation, its share of the cost and ANTs' gradient (correlate_voxel), with no window sums
// in global memory.
//
// A block owns an x-y tile (32 x columns; kMarchRowsPerThread rows per warp) and marches along z
// through a segment of planes. Shared memory holds, for each of the tile's rows and of the
// radius' halo rows above and below it, the running z-window sums of the x-window sums. Each
// plane step adds, two rows at a time, the x-window sums of the plane entering the z-window
// minus those of the plane leaving it: a warp stages the two rows' product differences (each
// voxel's once, all the loads in flight before the products; the halo's reads served by L1/L2)
// in its own strip of shared memory, and each lane of a half-warp slides the x-window over two
// adjacent columns there. Then, once the block has synchronised, each thread takes the y-window
// sums of its column (sliding over its rows) and correlates the voxel. DRAM traffic: the images
// once, the gradient once. The sums are the CPU's (local_cc.hpp) in another order, in double.
// Radii up to kMaxUnrolledRadius have kernels of their own (loops unrolled), larger ones a
// generic one. Not DRAM bounds it but its instructions and their latency: timed by phase with
// clock64 on an H100 (256^3, r = 4, 16 warps a multiprocessor), the staging and x-window take a
// third of a plane step and the y-window and correlation two thirds (the gradient's reads and
// writes a fifth of the pass); profiled (Nsight Compute, 256x256x160, r = 4) it executes about
// 620 instructions a voxel (124 of them FP64, some 300 integer, address and branch ones) at
// about 2 a clock a multiprocessor, half the issue rate (bench/results/syn_speed_h100.md).
#include "lcc_march.hpp"
#include "lcc_voxel.cuh"
#include "reduce.cuh"

#include <regpipe/plugin.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace regpipe::cost_dense_cuda {
namespace {

constexpr int kTileX = 32;              // columns of a tile: the correlation takes a lane each
constexpr int kMarchRowsPerThread = 4;  // the y-window slides over them (fewer halo rows per row)
constexpr int kMinSegment = 4;          // planes: a segment repeats 2r planes of start-up
// The x-window: a half-warp per halo row, two rows a step, each lane sliding over two adjacent
// columns (2r + 2 reads for two windows instead of 2 (2r + 1)).
constexpr int kRowsPerStep = 2;
constexpr int kLanesPerRow = kTileX / 2;
constexpr int kMaxUnrolledRadius = 8;  // radii compiled with their loops unrolled; larger ones run generic

constexpr int kMaxMarchThreads = 256;  // with kMinBlocksPerSm: registers for the 2 blocks the shared memory holds
constexpr int kMinBlocksPerSm = 2;

// A staged row holds its kTileX + 2 radius columns de-interleaved, even columns then odd ones,
// each half `stage_half` long: a half-warp's lanes then read consecutive doubles. The half is
// padded to 8 mod 16 doubles so that a half-warp's writes (even and odd lanes) miss each other's
// banks.
__host__ __device__ constexpr int stage_half(int radius) {
  const int need = kTileX / 2 + radius;
  return need + (24 - need % 16) % 16;
}

// The window sums a kernel keeps, from first_kept_sum on: all six where the voxels are weighted;
// without weights the window's weight is its count of voxels inside the grid (window_voxels).
__host__ __device__ constexpr int first_kept_sum(bool weighted) { return weighted ? kSumW : kSumF; }
__host__ __device__ constexpr int kept_sums(bool weighted) { return kSums - first_kept_sum(weighted); }
__host__ __device__ constexpr int stage_row_doubles(int radius, bool weighted) {
  return kept_sums(weighted) * 2 * stage_half(radius);
}

// sums[kept k][halo row][column], then each warp's staging rows stage[row of the step][kept
// k][parity][column / 2].
std::size_t march_shared_bytes(int warps, int radius, bool weighted) {
  const std::size_t halo_rows = std::size_t(kMarchRowsPerThread * warps + 2 * radius);
  return sizeof(double) * (std::size_t(kept_sums(weighted)) * halo_rows * kTileX +
                           std::size_t(warps) * kRowsPerStep * std::size_t(stage_row_doubles(radius, weighted)));
}

// The voxels of the window of radius r around `at` inside [0, size).
__device__ __forceinline__ int window_extent(int at, int radius, int size) {
  return min(at + radius, size - 1) - max(at - radius, 0) + 1;
}

// Row b of the step, column c (of kTileX + 2 radius, from x0 - radius): stage[b][kept k][c % 2][c /
// 2] = product k of the voxel at (x0 - radius + c, y + b) of plane `enter` minus that of plane
// `leave`; 0 outside the grid. The warp's lanes take the step's columns in turn, all their loads
// issued before the products.
template <int kRadius, bool kWeighted>
__device__ __forceinline__ void stage_plane_difference(const VoxelArgs& a, const Moments& s, int radius, int x0, int y,
                                                       int enter, int leave, double* stage) {
  const Dims d = a.d;
  const int width = kTileX + 2 * radius, half = stage_half(radius);
  const bool entering = enter >= 0 && enter < d.nz, leaving = leave >= 0 && leave < d.nz;
  const std::size_t plane = std::size_t(d.nx) * d.ny;
  const std::size_t base_in = std::size_t(entering ? enter : 0) * plane, base_out = std::size_t(leaving ? leave : 0) * plane;
  constexpr int kChunk = kRadius > 0 ? (kRowsPerStep * (kTileX + 2 * kRadius) + 31) / 32 : 3;  // columns per lane
  const int lane = int(threadIdx.x & 31);
  for (int e0 = 0; e0 < kRowsPerStep * width; e0 += 32 * kChunk) {
    float f_in[kChunk], m_in[kChunk], w_in[kChunk], f_out[kChunk], m_out[kChunk], w_out[kChunk];
    bool inside[kChunk];
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      const int e = e0 + 32 * j + lane, b = e / width, x = x0 - radius + (e - b * width), row = y + b;
      inside[j] = b < kRowsPerStep && x >= 0 && x < d.nx && row >= 0 && row < d.ny;
      const std::size_t i = inside[j] ? std::size_t(row) * d.nx + x : 0;
      f_in[j] = m_in[j] = f_out[j] = m_out[j] = 0.f;
      w_in[j] = w_out[j] = 1.f;
      if (inside[j] && entering) {
        f_in[j] = __ldg(a.fixed + base_in + i);
        m_in[j] = __ldg(a.moving + base_in + i);
        if (kWeighted) w_in[j] = __ldg(a.weight + base_in + i);
      }
      if (inside[j] && leaving) {
        f_out[j] = __ldg(a.fixed + base_out + i);
        m_out[j] = __ldg(a.moving + base_out + i);
        if (kWeighted) w_out[j] = __ldg(a.weight + base_out + i);
      }
    }
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      const int e = e0 + 32 * j + lane, b = e / width, c = e - b * width;
      if (b >= kRowsPerStep) continue;
      double acc[kSums] = {0, 0, 0, 0, 0, 0};
      if (inside[j] && entering)
        add_products(acc, kWeighted ? weight_value(w_in[j], a.weight_is_mask) : 1.0, double(f_in[j]) - s.fixed_mean,
                     double(m_in[j]) - s.moving_mean);
      if (inside[j] && leaving)
        add_products(acc, kWeighted ? -weight_value(w_out[j], a.weight_is_mask) : -1.0, double(f_out[j]) - s.fixed_mean,
                     double(m_out[j]) - s.moving_mean);
      double* column = stage + b * stage_row_doubles(radius, kWeighted) + (c & 1) * half + (c >> 1);
      for (int k = first_kept_sum(kWeighted); k < kSums; ++k)
        column[(k - first_kept_sum(kWeighted)) * 2 * half] = acc[k];
    }
  }
}

// Lane l of a half-warp: the x-window sums of its staged row at columns 2 l and 2 l + 1 (the
// first over staged columns 2 l .. 2 l + 2 radius, the second slid one on), added to the row's
// running z-window sums `row_sums` (kept k-th at k * k_stride).
template <int kRadius, bool kWeighted>
__device__ __forceinline__ void add_x_windows(int radius, const double* staged, int l, double* row_sums,
                                              int k_stride) {
  const int r = kRadius > 0 ? kRadius : radius, half = stage_half(r);
#pragma unroll
  for (int k = 0; k < kept_sums(kWeighted); ++k) {
    const double* even = staged + k * 2 * half + l;  // even[u]: staged column 2 (l + u)
    const double* odd = even + half;                 // odd[u]: staged column 2 (l + u) + 1
    const double first = even[0];
    double window = first;
#pragma unroll
    for (int u = 0; u < r; ++u) window += odd[u] + even[u + 1];
    double2* target = reinterpret_cast<double2*>(row_sums + k * k_stride + 2 * l);
    double2 v = *target;
    v.x += window;
    v.y += window - first + odd[r];
    *target = v;
  }
}

// Block (x-tile, y-tile, z-segment); blockDim.x = 32 * warps; tile_rows = kMarchRowsPerThread
// * warps. Shared memory: march_shared_bytes(warps, radius, kWeighted). kRadius: the radius if
// compiled in, 0 for `radius`; kWeighted: a.weight is not null.
template <int kRadius, bool kWeighted>
__global__ void __launch_bounds__(kMaxMarchThreads, kMinBlocksPerSm)
    lcc_march_kernel(VoxelArgs a, const double* stats, double* terms, double* partials, int radius_arg, int tile_rows,
                     int segment) {
  extern __shared__ __align__(16) double shared[];
  const int radius = kRadius > 0 ? kRadius : radius_arg;
  const Moments s = moments_of(stats, a);
  const Dims d = a.d;
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5, warps = int(blockDim.x) >> 5;
  const int halo_rows = tile_rows + 2 * radius, k_stride = halo_rows * kTileX;
  double* sums = shared;
  constexpr int kFirst = first_kept_sum(kWeighted), kKept = kept_sums(kWeighted);
  const int stage_row = stage_row_doubles(radius, kWeighted);
  double* stage = shared + std::size_t(kKept) * k_stride + std::size_t(warp) * kRowsPerStep * stage_row;
  const int x0 = int(blockIdx.x) * kTileX, x = x0 + lane, y0 = int(blockIdx.y) * tile_rows;
  const int z0 = int(blockIdx.z) * segment, z1 = min(z0 + segment, d.nz);
  auto at = [&](int k, int row) -> double& { return sums[(k - kFirst) * k_stride + row * kTileX + lane]; };
  for (int i = int(threadIdx.x); i < kKept * k_stride; i += int(blockDim.x)) sums[i] = 0.0;
  __syncthreads();
  double weighted_rho2 = 0.0;
  const int steps = halo_rows / kRowsPerStep;  // halo_rows is even
  const int step_row = lane / kLanesPerRow, step_lane = lane % kLanesPerRow;
  // Plane p enters the z-window of voxel z = p - radius; p - 2 radius - 1 leaves it (from the
  // segment's second voxel on: the start-up adds planes z0 - radius .. z0 + radius only).
  for (int p = z0 - radius; p < z1 + radius; ++p) {
    const int leave = p - 2 * radius - 1 >= z0 - radius ? p - 2 * radius - 1 : -1;
    // A warp updates only the rows of its steps (warp, warp + warps, ..): no block
    // synchronisation until the y-window reads the others'.
    for (int step = warp; step < steps; step += warps) {
      const int row = kRowsPerStep * step;
      const int y = y0 - radius + row;
      if (y + kRowsPerStep <= 0 || y >= d.ny) continue;  // stays 0: the window is clipped at the faces
      stage_plane_difference<kRadius, kWeighted>(a, s, radius, x0, y, p, leave, stage);
      __syncwarp();
      add_x_windows<kRadius, kWeighted>(radius, stage + step_row * stage_row, step_lane,
                                        sums + (row + step_row) * kTileX, k_stride);
      __syncwarp();  // the next step overwrites the staging rows
    }
    const int z = p - radius;
    if (z < z0) continue;  // start-up (the same for the whole block)
    __syncthreads();
    // Output rows first .. first + kMarchRowsPerThread - 1 of the tile; row q's y-window is
    // halo rows q .. q + 2 radius. Each row's voxel reads are issued before the y-window and the
    // correlation of the row before it (they wait on memory, the arithmetic does not).
    const int first = warp * kMarchRowsPerThread;
    const bool gradient = terms == nullptr && a.gradient_out != nullptr;
    const auto reads_of = [&](int q) {
      VoxelReads v{};
      const int y = y0 + q;
      if (x < d.nx && y < d.ny) {
        const long at_voxel[3] = {x, y, z};
        v = voxel_reads(a, at_voxel, (std::size_t(z) * d.ny + y) * d.nx + x, gradient);
      }
      return v;
    };
    VoxelReads next = reads_of(first);
    double window[kSums] = {0, 0, 0, 0, 0, 0};
    for (int row = first; row <= first + 2 * radius; ++row)
      for (int k = kFirst; k < kSums; ++k) window[k] += at(k, row);
    for (int q = first; q < first + kMarchRowsPerThread; ++q) {
      const VoxelReads current = next;
      if (q + 1 < first + kMarchRowsPerThread) next = reads_of(q + 1);
      if (q > first)
        for (int k = kFirst; k < kSums; ++k) window[k] += at(k, q + 2 * radius) - at(k, q - 1);
      const int y = y0 + q;
      if (x < d.nx && y < d.ny) {
        if (!kWeighted)
          window[kSumW] = double(window_extent(x, radius, d.nx) * window_extent(y, radius, d.ny) *
                                 window_extent(z, radius, d.nz));
        weighted_rho2 += correlate_voxel(a, s, window, current, (std::size_t(z) * d.ny + y) * d.nx + x, terms);
      }
    }
    __syncthreads();  // the next plane step changes the sums read here
  }
  weighted_rho2 = block_sum(weighted_rho2);
  const std::size_t block = (std::size_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) partials[block] = weighted_rho2;
}

using MarchKernel = void (*)(VoxelArgs, const double*, double*, double*, int, int, int);

template <bool kWeighted, int... kRadii>
MarchKernel kernel_among(int radius, std::integer_sequence<int, kRadii...>) {
  MarchKernel kernel = &lcc_march_kernel<0, kWeighted>;
  ((kernel = radius == kRadii + 1 ? &lcc_march_kernel<kRadii + 1, kWeighted> : kernel), ...);
  return kernel;
}

// The kernel for a radius: its own up to kMaxUnrolledRadius, the generic one beyond.
MarchKernel march_kernel(int radius, bool weighted) {
  constexpr auto radii = std::make_integer_sequence<int, kMaxUnrolledRadius>{};
  return weighted ? kernel_among<true>(radius, radii) : kernel_among<false>(radius, radii);
}

}  // namespace

MarchLaunch plan_lcc_march(const Dims& d, int radius, bool weighted, int threads, int sm_count,
                           std::size_t shared_optin) {
  // Warps: no more than the grid's rows need, and no more than the shared memory holds.
  const int rows_needed = (d.ny + kMarchRowsPerThread - 1) / kMarchRowsPerThread;
  int warps = std::min(std::min(threads, kMaxMarchThreads) / 32, rows_needed);
  const void* kernel = reinterpret_cast<const void*>(march_kernel(radius, weighted));
  cudaFuncAttributes attributes{};
  RP_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  const std::size_t dynamic_limit = shared_optin - std::min(shared_optin, attributes.sharedSizeBytes);  // less block_sum's
  while (warps > 1 && march_shared_bytes(warps, radius, weighted) > dynamic_limit) --warps;
  MarchLaunch plan;
  plan.weighted = weighted;
  plan.threads = 32 * warps;
  const int tile_rows = kMarchRowsPerThread * warps;
  plan.shared = march_shared_bytes(warps, radius, weighted);
  if (plan.shared > dynamic_limit)
    throw rp::Error(RP_UNSUPPORTED, "cuda.lcc radius=" + std::to_string(radius) + " needs " +
                                        std::to_string(plan.shared) + " bytes of shared memory, the device allows " +
                                        std::to_string(dynamic_limit) + "; use a smaller radius or cpu.lcc");
  // Shared memory before L1: the halo's re-reads are another block's, served by L2.
  RP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     cudaSharedmemCarveoutMaxShared));
  // The limit is the kernel's, shared by every cuda.lcc instance, each launching its own cached
  // plan: raised, never lowered.
  if (plan.shared > std::size_t(attributes.maxDynamicSharedSizeBytes))
    RP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(plan.shared)));
  int per_sm = 1;
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, plan.threads, plan.shared));
  const unsigned tiles_x = unsigned((d.nx + kTileX - 1) / kTileX);
  const unsigned tiles_y = unsigned((d.ny + tile_rows - 1) / tile_rows);
  // Segments: as many as one wave of resident blocks holds (shorter segments repeat more
  // start-up planes; more blocks than a wave leave a tail).
  const std::size_t resident = std::size_t(std::max(per_sm, 1)) * std::size_t(std::max(sm_count, 1));
  const int most = std::max(1, (d.nz + kMinSegment - 1) / kMinSegment);
  const int wanted = int(std::clamp<std::size_t>(resident / (std::size_t(tiles_x) * tiles_y), 1, std::size_t(most)));
  plan.segment = (d.nz + wanted - 1) / wanted;
  plan.grid = dim3(tiles_x, tiles_y, unsigned((d.nz + plan.segment - 1) / plan.segment));
  return plan;
}

void launch_lcc_march(const MarchLaunch& plan, const VoxelArgs& a, const double* stats, double* terms,
                      double* partials, int radius, cudaStream_t stream) {
  march_kernel(radius, plan.weighted)<<<plan.grid, plan.threads, plan.shared, stream>>>(
      a, stats, terms, partials, radius, kMarchRowsPerThread * (plan.threads / 32), plan.segment);
  RP_CUDA_CHECK_LAUNCH("lcc_march_kernel");
}

}  // namespace regpipe::cost_dense_cuda
