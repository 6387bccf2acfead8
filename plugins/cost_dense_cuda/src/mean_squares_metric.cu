// cuda.ls: ANTs' MeanSquares (regpipe_common/dense_metrics/mean_squares.hpp) on the device:
//   cost = (1 / W) sum w (f - m)^2, W = sum w;  d cost / d m = -(2 w / W) (f - m).
// One pass for the two sums (per-block partials added in a fixed order: the same bits every
// call), one for the gradient.
#include "dense_voxels.cuh"
#include "metrics.hpp"
#include "reduce.cuh"

#include <regpipe_common/measure_math.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

namespace regpipe::cost_dense_cuda {
namespace {

enum { kWeight, kSquares, kSums };

__global__ void sums_kernel(VoxelArgs a, double* partials) {
  double weight = 0.0, squares = 0.0;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.d.n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double w = weight_of(a.weight, a.weight_is_mask, i), d = double(a.fixed[i]) - double(a.moving[i]);
    weight += w;
    squares += w * d * d;
  }
  weight = block_sum(weight);
  squares = block_sum(squares);
  if (threadIdx.x == 0) {
    partials[std::size_t(blockIdx.x) * kSums + kWeight] = weight;
    partials[std::size_t(blockIdx.x) * kSums + kSquares] = squares;
  }
}

__global__ void gradient_kernel(VoxelArgs a, const double* sums) {
  const double total = sums[kWeight];
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.d.n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    if (!(total > 0.0)) {
      write_zero_gradient(a, i);
      continue;
    }
    const double w = weight_of(a.weight, a.weight_is_mask, i), d = double(a.fixed[i]) - double(a.moving[i]);
    write_world_gradient(a, i, -2.0 * w * d / total);
  }
}

// No weight at all gives measure_math's worst least-squares cost.
__global__ void finish_cost_kernel(const double* sums, double* cost_out) {
  const double total = sums[kWeight];
  *cost_out = total > 0.0 ? sums[kSquares] / total : regpipe_common::kWorstLeastSquaresCost;
}

class MeanSquaresMetric final : public DeviceMetric {
 public:
  std::size_t workspace_bytes(std::size_t, bool) const override {
    return (std::size_t(kMaxReduceBlocks) + 1) * kSums * sizeof(double);
  }

  void run(const DenseProblem& p, const regpipe_common_cuda::DeviceInfo&, cudaStream_t stream,
           double* cost_out) override {
    const VoxelArgs a = voxel_args(p);
    const int threads = p.threads_per_block, blocks = reduce_blocks(a.d.n, threads);
    partials_.ensure(std::size_t(kMaxReduceBlocks) * kSums);
    sums_.ensure(kSums);
    sums_kernel<<<blocks, threads, 0, stream>>>(a, partials_.get());
    RP_CUDA_CHECK_LAUNCH("sums_kernel");
    finish_sums<<<kSums, 256, 0, stream>>>(partials_.get(), blocks, kSums, sums_.get());
    RP_CUDA_CHECK_LAUNCH("finish_sums");
    if (p.gradient_out != nullptr) {
      gradient_kernel<<<blocks, threads, 0, stream>>>(a, sums_.get());
      RP_CUDA_CHECK_LAUNCH("gradient_kernel");
    }
    finish_cost_kernel<<<1, 1, 0, stream>>>(sums_.get(), cost_out);
    RP_CUDA_CHECK_LAUNCH("finish_cost_kernel");
  }

 private:
  regpipe_common_cuda::DeviceBuffer<double> partials_, sums_;
};

}  // namespace

std::unique_ptr<DeviceMetric> make_mean_squares_metric() { return std::make_unique<MeanSquaresMetric>(); }

}  // namespace regpipe::cost_dense_cuda
