// The accumulation schemes. Each takes the shared kernel arguments and writes, for every one
// of the k transforms, the double bin sums and the overlap weight (zeroed by the caller).
// Li & Kumar 2014, section III (scheme1..scheme5); `fused` is ours (README.md).
#pragma once

#include "../device_buffer.hpp"
#include "../kernels/cr_args.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace regpipe::cost_cr_cuda {

// Reference layouts prepared once per set_reference and reused by every evaluation.
struct ReferenceLayouts {
  uint32_t voxel_count = 0;           // full grid (schemes 1-4 map every voxel, as the paper)
  const uint32_t* active = nullptr;   // indices of voxels with weight > 0, ascending (fused)
  uint32_t active_count = 0;
  int hot_bin = 0;                    // the most populated bin among active voxels (fused)
  const uint32_t* sorted = nullptr;   // active voxels sorted by bin (scheme5)
  const int4* chunks = nullptr;       // scheme5 work items: {bin, start, end, 0} into `sorted`
  const int* bin_first_chunk = nullptr;  // bins + 1 entries: chunks of bin b are [f[b], f[b+1])
  int chunk_count = 0;
};

struct SchemeLaunch {
  CrArgs args;
  std::size_t k = 1;
  int threads_per_block = 256;
  int blocks = 0;  // 0: the scheme's own choice
  int sm_count = 1;
  cudaStream_t stream = nullptr;
  const ReferenceLayouts* layouts = nullptr;
  DeviceBuffer<float>* scratch = nullptr;         // scheme-private working memory
  DeviceBuffer<double>* scratch_double = nullptr;
};

void run_scheme1(const SchemeLaunch& l);   // global-memory atomics
void run_scheme2(const SchemeLaunch& l);   // per-thread shadow histograms in global memory
void run_scheme3a(const SchemeLaunch& l);  // per-block shared histograms, merged by atomics
void run_scheme3b(const SchemeLaunch& l);  // per-block shared histograms, merged by a reduction
void run_scheme4(const SchemeLaunch& l);   // per-warp shared histograms
void run_scheme5(const SchemeLaunch& l);   // presorted reference, conflict-free
void run_fused(const SchemeLaunch& l);     // ours: batched, hot bin in registers

// scheme5's preprocessing: sorts the active voxels by bin (Thrust) and cuts the runs of each
// bin into chunks of at most `max_workload` voxels. Fills the layout's sorted/chunks fields
// with buffers it owns through the given DeviceBuffers.
struct PresortBuffers {
  DeviceBuffer<uint32_t> sorted;
  DeviceBuffer<int4> chunks;
  DeviceBuffer<int> bin_first_chunk;
};
void presort_reference(const int32_t* host_bins, const std::vector<uint32_t>& active, int bins,
                       int max_workload, cudaStream_t stream, PresortBuffers& buffers,
                       ReferenceLayouts& layouts);

// Blocks for a grid-stride pass over `work` items: enough to fill the GPU, no more than
// the work needs.
inline int grid_blocks(const SchemeLaunch& l, std::size_t work, int fill_factor = 4) {
  if (l.blocks > 0) return l.blocks;
  const std::size_t needed = (work + std::size_t(l.threads_per_block) - 1) / std::size_t(l.threads_per_block);
  const std::size_t fill = std::size_t(l.sm_count) * std::size_t(fill_factor);
  return int(needed < fill ? (needed > 0 ? needed : 1) : fill);
}

}  // namespace regpipe::cost_cr_cuda
