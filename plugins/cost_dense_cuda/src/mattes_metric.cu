// cuda.mattes: ANTs' Mattes MI (regpipe_common/dense_metrics/mattes_mi.hpp) on the device, with
// the reference's own per-voxel and per-histogram functions (mattes_parzen.hpp, compiled with
// --fmad=false so that bin positions and Parzen weights are the host's bit for bit):
//   1. each image's [min, max] over the counted voxels (per-block partials, a fixed-order
//      finish; min and max are exact in any order), then the two binnings;
//   2. the joint histogram, privatised per warp in shared memory: each warp takes a fixed set
//      of voxels, and within a warp the lanes that hit one cell add their values in lane order
//      through their leader (__match_any_sync), so no floating-point atomics and the same bits
//      every call; the warps' histograms are then added cell by cell in warp order;
//   3. one thread turns the joint histogram into the cost and the derivative's weights
//      log(p / p_M), exactly as the reference (mattes_cost_from_joint);
//   4. per voxel, Mattes' derivative (mattes_d_cost_d_moving) times the moving image's
//      central difference, into LPS world.
// Against the CPU reference only the order of the histogram's additions differs.
#include "dense_voxels.cuh"
#include "metrics.hpp"
#include "params.hpp"
#include "reduce.cuh"

#include <regpipe_common/dense_metrics/mattes_parzen.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>
#include <string>

namespace regpipe::cost_dense_cuda {
namespace {

using regpipe_common::dense_metrics::MattesBinning;
namespace dm = regpipe_common::dense_metrics;

enum { kFixedLo, kFixedHi, kMovingLo, kMovingHi, kRangeCount };
constexpr int kMaxHistogramWarps = 1024;
constexpr std::size_t kMaxWarpHistogramBytes = std::size_t(64) << 20;

struct MinOp {
  __device__ double operator()(double a, double b) const { return fmin(a, b); }
};
struct MaxOp {
  __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

__global__ void range_kernel(VoxelArgs a, double* partials) {
  double v[kRangeCount] = {INFINITY, -INFINITY, INFINITY, -INFINITY};
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.d.n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if (!(weight_of(a.weight, a.weight_is_mask, i) > 0.0)) continue;
    v[kFixedLo] = fmin(v[kFixedLo], double(a.fixed[i]));
    v[kFixedHi] = fmax(v[kFixedHi], double(a.fixed[i]));
    v[kMovingLo] = fmin(v[kMovingLo], double(a.moving[i]));
    v[kMovingHi] = fmax(v[kMovingHi], double(a.moving[i]));
  }
  for (int k = 0; k < kRangeCount; ++k) {
    const double r = k % 2 == 0 ? block_reduce(v[k], MinOp{}, INFINITY) : block_reduce(v[k], MaxOp{}, -INFINITY);
    if (threadIdx.x == 0) partials[std::size_t(blockIdx.x) * kRangeCount + k] = r;
  }
}

// binnings[0] fixed, [1] moving, from the blocks' ranges.
__global__ void binning_kernel(const double* partials, int blocks, int bins, MattesBinning* binnings) {
  double v[kRangeCount] = {INFINITY, -INFINITY, INFINITY, -INFINITY};
  for (int b = threadIdx.x; b < blocks; b += blockDim.x)
    for (int k = 0; k < kRangeCount; ++k) {
      const double p = partials[std::size_t(b) * kRangeCount + k];
      v[k] = k % 2 == 0 ? fmin(v[k], p) : fmax(v[k], p);
    }
  for (int k = 0; k < kRangeCount; ++k)
    v[k] = k % 2 == 0 ? block_reduce(v[k], MinOp{}, INFINITY) : block_reduce(v[k], MaxOp{}, -INFINITY);
  if (threadIdx.x == 0) {
    binnings[0] = dm::mattes_binning_of_range(v[kFixedLo], v[kFixedHi], bins);
    binnings[1] = dm::mattes_binning_of_range(v[kMovingLo], v[kMovingHi], bins);
  }
}

__device__ __forceinline__ int fixed_row(const MattesBinning& fixed, float f) {
  return fixed.clamped_bin(fixed.position(f));
}

// Adds `value` to hist[cell] for every active lane, the lanes of one cell summed in lane order
// by the lowest of them. All 32 lanes of the warp call it.
__device__ __forceinline__ void add_in_lane_order(double* hist, double* stage, int cell, double value, bool active) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned peers = __match_any_sync(0xffffffffu, active ? cell : -1);
  stage[lane] = value;
  __syncwarp();
  if (active && unsigned(__ffs(peers) - 1) == lane) {
    double sum = 0.0;
    for (unsigned m = peers; m != 0u; m &= m - 1u) sum += stage[__ffs(m) - 1];
    hist[cell] += sum;
  }
  __syncwarp();
}

// Warp w (of `warps`) adds voxels [32 (w + k warps), +32) for k = 0, 1, ... into its own
// histogram, then writes it to warp_histograms[w].
__global__ void histogram_kernel(VoxelArgs a, const MattesBinning* binnings, int bins, int warps,
                                 double* warp_histograms) {
  extern __shared__ double shared[];
  const int cells = bins * bins, lane = int(threadIdx.x & 31u), local_warp = int(threadIdx.x >> 5);
  const int warp = int(blockIdx.x) * int(blockDim.x >> 5) + local_warp;
  if (warp >= warps) return;  // whole warps leave together
  double* hist = shared + std::size_t(local_warp) * (cells + 32);
  double* stage = hist + cells;
  for (int j = lane; j < cells; j += 32) hist[j] = 0.0;
  __syncwarp();
  const MattesBinning fixed = binnings[0], moving = binnings[1];
  for (std::size_t base = std::size_t(warp) * 32; base < a.d.n; base += std::size_t(warps) * 32) {
    const std::size_t i = base + lane;
    const double w = i < a.d.n ? weight_of(a.weight, a.weight_is_mask, i) : 0.0;
    const bool active = w > 0.0;
    int row = 0, first = 0;
    double t = 0.0;
    if (active) {
      row = fixed_row(fixed, a.fixed[i]);
      t = moving.position(a.moving[i]);
      first = moving.first_parzen_bin(t);
    }
    for (int k = 0; k < dm::kMattesParzenTaps; ++k)
      add_in_lane_order(hist, stage, row * bins + first + k, active ? w * dm::cubic_bspline(first + k - t) : 0.0,
                        active);
  }
  double* out = warp_histograms + std::size_t(warp) * cells;
  for (int j = lane; j < cells; j += 32) out[j] = hist[j];
}

// joint[cell] = sum over warps, in warp order.
__global__ void sum_histograms_kernel(const double* warp_histograms, int warps, int cells, double* joint) {
  const int cell = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (cell >= cells) return;
  double sum = 0.0;
  for (int w = 0; w < warps; ++w) sum += warp_histograms[std::size_t(w) * cells + cell];
  joint[cell] = sum;
}

// One thread: the reference's own finish (mattes_cost_from_joint).
__global__ void finish_kernel(double* joint, int bins, double* marginals, double* log_ratio, double* total,
                              double* cost_out) {
  *cost_out = dm::mattes_cost_from_joint(joint, bins, marginals, marginals + bins, log_ratio, total);
}

__global__ void gradient_kernel(VoxelArgs a, const MattesBinning* binnings, int bins, const double* log_ratio,
                                const double* total_in) {
  const double total = *total_in;
  const MattesBinning fixed = binnings[0], moving = binnings[1];
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.d.n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double w = weight_of(a.weight, a.weight_is_mask, i);
    if (!(w > 0.0) || !(total > 0.0)) {
      write_zero_gradient(a, i);
      continue;
    }
    const double* row = log_ratio + std::size_t(fixed_row(fixed, a.fixed[i])) * bins;
    write_world_gradient(a, i, dm::mattes_d_cost_d_moving(row, moving, moving.position(a.moving[i]), w, total));
  }
}

class MattesMetric final : public DeviceMetric {
 public:
  explicit MattesMetric(int bins) : bins_(bins) {}

  std::size_t workspace_bytes(std::size_t voxels, bool) const override {
    const std::size_t cells = std::size_t(bins_) * bins_;
    return std::size_t(histogram_warps(voxels)) * cells * sizeof(double) + (2 * cells + 2 * bins_ + 1) * sizeof(double) +
           std::size_t(kMaxReduceBlocks) * kRangeCount * sizeof(double);
  }

  void run(const DenseProblem& p, const regpipe_common_cuda::DeviceInfo& device, cudaStream_t stream,
           double* cost_out) override {
    const VoxelArgs a = voxel_args(p);
    const int threads = p.threads_per_block, blocks = reduce_blocks(a.d.n, threads);
    const int cells = bins_ * bins_, warps = histogram_warps(a.d.n);
    const std::size_t warp_bytes = (std::size_t(cells) + 32) * sizeof(double);
    if (warp_bytes > device.shared_per_block)
      throw rp::Error(RP_UNSUPPORTED, "cuda.mattes holds a warp's joint histogram in shared memory: bins=" +
                                          std::to_string(bins_) + " needs " + std::to_string(warp_bytes) +
                                          " bytes, the device allows " + std::to_string(device.shared_per_block) +
                                          "; use fewer bins or cpu.mattes");
    const int warps_per_block = int(std::min<std::size_t>(threads / 32, device.shared_per_block / warp_bytes));
    const std::size_t shared_bytes = std::size_t(warps_per_block) * warp_bytes;
    if (shared_bytes > 48 * 1024)
      RP_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(&histogram_kernel),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
    range_partials_.ensure(std::size_t(kMaxReduceBlocks) * kRangeCount);
    binnings_.ensure(2);
    warp_histograms_.ensure(std::size_t(warps) * cells);
    joint_.ensure(cells);
    log_ratio_.ensure(cells);
    marginals_.ensure(2 * std::size_t(bins_));
    total_.ensure(1);

    range_kernel<<<blocks, threads, 0, stream>>>(a, range_partials_.get());
    RP_CUDA_CHECK_LAUNCH("range_kernel");
    binning_kernel<<<1, 256, 0, stream>>>(range_partials_.get(), blocks, bins_, binnings_.get());
    RP_CUDA_CHECK_LAUNCH("binning_kernel");
    const int histogram_blocks = (warps + warps_per_block - 1) / warps_per_block;
    histogram_kernel<<<histogram_blocks, warps_per_block * 32, shared_bytes, stream>>>(a, binnings_.get(), bins_,
                                                                                      warps, warp_histograms_.get());
    RP_CUDA_CHECK_LAUNCH("histogram_kernel");
    sum_histograms_kernel<<<(cells + 255) / 256, 256, 0, stream>>>(warp_histograms_.get(), warps, cells,
                                                                   joint_.get());
    RP_CUDA_CHECK_LAUNCH("sum_histograms_kernel");
    finish_kernel<<<1, 1, 0, stream>>>(joint_.get(), bins_, marginals_.get(), log_ratio_.get(), total_.get(),
                                       cost_out);
    RP_CUDA_CHECK_LAUNCH("finish_kernel");
    if (p.gradient_out != nullptr) {
      gradient_kernel<<<blocks, threads, 0, stream>>>(a, binnings_.get(), bins_, log_ratio_.get(), total_.get());
      RP_CUDA_CHECK_LAUNCH("gradient_kernel");
    }
  }

 private:
  // Warps of the histogram pass: a function of the voxel count and bins only, so that the sums'
  // order, and the result's bits, do not depend on the launch or the device.
  int histogram_warps(std::size_t voxels) const {
    const std::size_t by_memory = kMaxWarpHistogramBytes / (std::size_t(bins_) * bins_ * sizeof(double));
    const std::size_t by_voxels = (voxels + 31) / 32;
    return int(std::max<std::size_t>(1, std::min({by_voxels, by_memory, std::size_t(kMaxHistogramWarps)})));
  }

  int bins_;
  regpipe_common_cuda::DeviceBuffer<double> range_partials_, warp_histograms_, joint_, log_ratio_, marginals_, total_;
  regpipe_common_cuda::DeviceBuffer<MattesBinning> binnings_;
};

}  // namespace

std::unique_ptr<DeviceMetric> make_mattes_metric(int bins) { return std::make_unique<MattesMetric>(bins); }

}  // namespace regpipe::cost_dense_cuda
