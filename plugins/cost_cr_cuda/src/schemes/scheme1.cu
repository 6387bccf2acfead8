// scheme1 (Li & Kumar 2014, section III.A): every thread maps reference voxels and adds to
// the per-bin counters in global memory with atomics. Deviation: the counters are double
// (native fp64 atomics on sm_60+) rather than the paper's float, for accuracy. Not bitwise
// repeatable (atomic order).
#include "../kernels/cr_sample.cuh"
#include "schemes.hpp"

namespace regpipe::cost_cr_cuda {
namespace {

__global__ void scheme1_kernel(CrArgs a, uint32_t voxels, int t) {
  double* sums = a.sums + std::size_t(t) * a.bins * kSumsPerBin;
  add_overlap(a.overlap + t, accumulate_with_atomics(a, a.maps + 12 * t, voxels, sums));
}

}  // namespace

void run_scheme1(const SchemeLaunch& l) {
  const uint32_t voxels = l.layouts->voxel_count;
  const int blocks = grid_blocks(l, voxels);
  for (std::size_t t = 0; t < l.k; ++t) {
    scheme1_kernel<<<blocks, l.threads_per_block, 0, l.stream>>>(l.args, voxels, int(t));
    RP_CUDA_CHECK_LAUNCH("scheme1_kernel");
  }
}

}  // namespace regpipe::cost_cr_cuda
