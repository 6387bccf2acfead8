// The finish step of the schemes that leave double bin sums (scheme1..scheme5): one block per
// transform computes the cost on the GPU (cr_finish.cuh) and zeroes the sums for the next
// call. fused finishes inside its own kernel instead (its last block per transform).
#include "../kernels/cr_finish.cuh"
#include "schemes.hpp"

namespace regpipe::cost_cr_cuda {
namespace {

constexpr int kFinishThreads = 256;

__global__ void __launch_bounds__(kFinishThreads) finish_double_kernel(CrArgs a) {
  const int t = int(blockIdx.x);
  double* sums = a.sums + std::size_t(t) * a.bins * kSumsPerBin;
  const double overlap = a.overlap[t];
  finish_transform(
      a, t, overlap, [&](int i) { return sums[i]; },
      [&] {
        for (int i = int(threadIdx.x); i < a.bins * kSumsPerBin; i += int(blockDim.x)) sums[i] = 0.0;
        if (threadIdx.x == 0) a.overlap[t] = 0.0;
      });
}

}  // namespace

void finish_double_sums(const SchemeLaunch& l) {
  // grid.x allows 2^31 - 1 blocks: any k of one call.
  finish_double_kernel<<<unsigned(l.k), kFinishThreads, 0, l.stream>>>(l.args);
  RP_CUDA_CHECK_LAUNCH("finish_double_kernel");
}

}  // namespace regpipe::cost_cr_cuda
