// cuda.lcc's separable scheme in one pass: the six window sums of w, w f, w m, w f^2, w m^2,
// w f m (f, m centred on their global weighted means) and, at each voxel, the correlation, its
// share of the cost and ANTs' gradient (correlate_voxel), with no window sums in global memory.
//
// A block owns an x-y tile (32 x columns, a lane each; kMarchRowsPerThread rows per warp) and
// marches along z through a segment of planes. Shared memory holds, for each of the tile's rows
// and of the radius' halo rows above and below it, the running z-window sums of the six x-window
// sums. Each plane step adds, row by row, the x-window sums of the plane entering the z-window
// minus those of the plane leaving it: a warp stages the row's six product differences (each
// voxel's once, the halo's reads served by L1/L2) in its own strip of shared memory and each
// lane sums its x-window there. Then, once the block has synchronised, each thread takes the
// y-window sums of its column (sliding over its rows) and correlates the voxel. DRAM traffic:
// the images once, the gradient once. The sums are the CPU's (local_cc.hpp) in another order,
// in double.
#include "lcc_march.hpp"
#include "lcc_voxel.cuh"
#include "reduce.cuh"

#include <regpipe/plugin.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>
#include <string>

namespace regpipe::cost_dense_cuda {
namespace {

constexpr int kTileX = 32;              // a warp's lanes: one x each
constexpr int kMarchRowsPerThread = 2;  // the y-window slides over them (fewer halo rows per row)
constexpr int kMinSegment = 4;          // planes: a segment repeats 2r planes of start-up

constexpr int kMaxMarchThreads = 256;   // with kMinBlocksPerSm: registers for 3 blocks a multiprocessor
constexpr int kMinBlocksPerSm = 3;

// sums[k][halo row][lane], then each warp's staging row stage[k][column], column in
// [0, kTileX + 2 radius).
std::size_t march_shared_bytes(int warps, int radius) {
  const std::size_t halo_rows = std::size_t(kMarchRowsPerThread * warps + 2 * radius);
  return std::size_t(kSums) * sizeof(double) * (halo_rows * kTileX + std::size_t(warps) * (kTileX + 2 * radius));
}

// stage[k][c] = product k of the voxel at (x0 - radius + c, y) of plane `enter` minus that of
// plane `leave`, for the warp's columns c (lane, lane + 32, ..); 0 outside the grid.
__device__ __forceinline__ void stage_plane_difference(const VoxelArgs& a, const Moments& s, int radius, int x0, int y,
                                                       int enter, int leave, double* stage) {
  const Dims d = a.d;
  const int width = kTileX + 2 * radius;
  const bool entering = enter >= 0 && enter < d.nz, leaving = leave >= 0 && leave < d.nz;
  const std::size_t row_in = entering ? (std::size_t(enter) * d.ny + y) * d.nx : 0;
  const std::size_t row_out = leaving ? (std::size_t(leave) * d.ny + y) * d.nx : 0;
  for (int c = int(threadIdx.x & 31); c < width; c += 32) {
    double acc[kSums] = {0, 0, 0, 0, 0, 0};
    const int x = x0 - radius + c;
    if (x >= 0 && x < d.nx) {
      if (entering) {
        const std::size_t i = row_in + x;
        add_products(acc, weight_of(a.weight, a.weight_is_mask, i), double(__ldg(a.fixed + i)) - s.fixed_mean,
                     double(__ldg(a.moving + i)) - s.moving_mean);
      }
      if (leaving) {
        const std::size_t i = row_out + x;
        add_products(acc, -weight_of(a.weight, a.weight_is_mask, i), double(__ldg(a.fixed + i)) - s.fixed_mean,
                     double(__ldg(a.moving + i)) - s.moving_mean);
      }
    }
    for (int k = 0; k < kSums; ++k) stage[k * width + c] = acc[k];
  }
}

// Block (x-tile, y-tile, z-segment); blockDim.x = 32 * warps; tile_rows = kMarchRowsPerThread
// * warps. Shared memory: march_shared_bytes(warps, radius).
__global__ void __launch_bounds__(kMaxMarchThreads, kMinBlocksPerSm)
    lcc_march_kernel(VoxelArgs a, const double* stats, double* terms, double* partials, int radius, int tile_rows,
                     int segment) {
  extern __shared__ double shared[];
  const Moments s = moments_of(stats, a);
  const Dims d = a.d;
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5, warps = int(blockDim.x) >> 5;
  const int halo_rows = tile_rows + 2 * radius, width = kTileX + 2 * radius;
  double* sums = shared;
  double* stage = shared + std::size_t(kSums) * halo_rows * kTileX + std::size_t(warp) * kSums * width;
  const int x0 = int(blockIdx.x) * kTileX, x = x0 + lane, y0 = int(blockIdx.y) * tile_rows;
  const int z0 = int(blockIdx.z) * segment, z1 = min(z0 + segment, d.nz);
  auto at = [&](int k, int row) -> double& { return sums[(k * halo_rows + row) * kTileX + lane]; };
  // A warp updates only its own rows (warp, warp + warps, ..): no block synchronisation until
  // the y-window reads the others'.
  for (int row = warp; row < halo_rows; row += warps)
    for (int k = 0; k < kSums; ++k) at(k, row) = 0.0;
  double weighted_rho2 = 0.0;
  // Plane p enters the z-window of voxel z = p - radius; p - 2 radius - 1 leaves it (from the
  // segment's second voxel on: the start-up adds planes z0 - radius .. z0 + radius only).
  for (int p = z0 - radius; p < z1 + radius; ++p) {
    const int leave = p - 2 * radius - 1 >= z0 - radius ? p - 2 * radius - 1 : -1;
    for (int row = warp; row < halo_rows; row += warps) {
      const int y = y0 - radius + row;
      if (y < 0 || y >= d.ny) continue;  // stays 0: the window is clipped at the faces
      // The row's products once per voxel (coalesced loads, all in flight at once), then each
      // lane's x-window from shared memory.
      stage_plane_difference(a, s, radius, x0, y, p, leave, stage);
      __syncwarp();
      for (int k = 0; k < kSums; ++k) {
        double window = 0.0;
        for (int dx = 0; dx <= 2 * radius; ++dx) window += stage[k * width + lane + dx];
        at(k, row) += window;
      }
      __syncwarp();  // the next row overwrites the staging row
    }
    const int z = p - radius;
    if (z < z0) continue;  // start-up (the same for the whole block)
    __syncthreads();
    // Output rows first .. first + kMarchRowsPerThread - 1 of the tile; row q's y-window is
    // halo rows q .. q + 2 radius.
    const int first = warp * kMarchRowsPerThread;
    double window[kSums] = {0, 0, 0, 0, 0, 0};
    for (int row = first; row <= first + 2 * radius; ++row)
      for (int k = 0; k < kSums; ++k) window[k] += at(k, row);
    for (int q = first; q < first + kMarchRowsPerThread; ++q) {
      if (q > first)
        for (int k = 0; k < kSums; ++k) window[k] += at(k, q + 2 * radius) - at(k, q - 1);
      const int y = y0 + q;
      if (x < d.nx && y < d.ny)
        weighted_rho2 += correlate_voxel(a, s, window, (std::size_t(z) * d.ny + y) * d.nx + x, terms);
    }
    __syncthreads();  // the next plane step changes the sums read here
  }
  weighted_rho2 = block_sum(weighted_rho2);
  const std::size_t block = (std::size_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) partials[block] = weighted_rho2;
}

}  // namespace

MarchLaunch plan_lcc_march(const Dims& d, int radius, int threads, int sm_count, std::size_t shared_optin) {
  // Warps: no more than the grid's rows need, and no more than the shared memory holds.
  const int rows_needed = (d.ny + kMarchRowsPerThread - 1) / kMarchRowsPerThread;
  int warps = std::min(std::min(threads, kMaxMarchThreads) / 32, rows_needed);
  while (warps > 1 && march_shared_bytes(warps, radius) > shared_optin) --warps;
  MarchLaunch plan;
  plan.threads = 32 * warps;
  const int tile_rows = kMarchRowsPerThread * warps;
  plan.shared = march_shared_bytes(warps, radius);
  if (plan.shared > shared_optin)
    throw rp::Error(RP_UNSUPPORTED, "cuda.lcc radius=" + std::to_string(radius) + " needs " +
                                        std::to_string(plan.shared) + " bytes of shared memory, the device allows " +
                                        std::to_string(shared_optin) + "; use a smaller radius or cpu.lcc");
  const void* kernel = reinterpret_cast<const void*>(&lcc_march_kernel);
  if (plan.shared > 48 * 1024)
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
  lcc_march_kernel<<<plan.grid, plan.threads, plan.shared, stream>>>(
      a, stats, terms, partials, radius, kMarchRowsPerThread * (plan.threads / 32), plan.segment);
  RP_CUDA_CHECK_LAUNCH("lcc_march_kernel");
}

}  // namespace regpipe::cost_dense_cuda
