// The accumulation schemes. Each takes the shared kernel arguments and, for every one of the
// k transforms, adds the bin sums and the overlap weight into the zeroed results buffer:
// scheme1..scheme5 as doubles, then finish_double_sums computes the costs; fused as 64-bit
// fixed point, and its kernel computes the costs itself. Li & Kumar 2014, section III
// (scheme1..scheme5); `fused` is ours (README.md).
#pragma once

#include "../kernels/cr_args.hpp"
#include "../reference_spans.hpp"

#include <regpipe_common/prepared_image.hpp>

#include <regpipe_common_cuda/device_buffer.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace regpipe::cost_cr_cuda {

using regpipe_common_cuda::DeviceBuffer;

// Fixed-point scales of fused's sums: a sample's product p is rounded to the 32-bit integer
// rint(p * scale), scale the power of two that keeps every possible product within 2^30, and
// the sums are exact 64-bit integers (at most 2^31 samples: below 2^61). Integer addition is
// associative, so the result does not depend on the order of the atomics.
struct FixedPointScales {
  double w = 1.0, wy = 1.0, wyy = 1.0, overlap = 1.0;
  float w_f = 1.f, wy_f = 1.f, wyy_f = 1.f;  // the same powers of two, for the per-sample products
  long long w_one = 1;                        // a weight of exactly 1 in fixed point
};

// fused's reference layout: the runs of weighted voxels along x ("spans"), each voxel's bin
// (uint16: bins <= 1024) and reference weight in span order, so that a warp walks a span with
// coalesced loads and no index arithmetic.
struct FusedLayout {
  const int4* spans = nullptr;       // {first voxel in span order, x of the first, length, y + ny * z}
  uint32_t span_count = 0;
  std::size_t span_voxels = 0;       // the spans' voxels, summed
  const uint16_t* bins = nullptr;
  const float* ref_weight = nullptr;  // null: weight 1
  int hot_bin = 0;                    // the most populated bin of the weighted reference voxels
  std::size_t fewest_blocks = 1;      // blocks a transform so that none exceeds kMaxBlockSamples
  int blocks_per_sm[2] = {1, 1};      // resident blocks of the kernel: [0] general, [1] plain
};

// Reference layouts prepared once per set_reference and reused by every evaluation.
struct ReferenceLayouts {
  uint32_t voxel_count = 0;           // full grid (schemes 1-4 map every voxel, as the paper)
  const uint32_t* sorted = nullptr;   // voxels with weight > 0 sorted by bin (scheme5)
  const int4* chunks = nullptr;       // scheme5 work items: {bin, start, end, 0} into `sorted`
  const int* bin_first_chunk = nullptr;  // bins + 1 entries: chunks of bin b are [f[b], f[b+1])
  int chunk_count = 0;
  FusedLayout fused;
};

struct SchemeLaunch {
  CrArgs args;
  std::size_t k = 1;
  int threads_per_block = 256;
  int blocks = 0;  // 0: the scheme's own choice
  int sm_count = 1;
  cudaStream_t stream = nullptr;
  const ReferenceLayouts* layouts = nullptr;
  bool unit_weights = true;  // no weight images and no fuzzy border: every sample inside weighs 1
  FixedPointScales fixed;    // fused only
  unsigned* tickets = nullptr;  // fused: k counters of finished blocks, zero between calls
  // fused, calls of at most kFusedInlineMaps transforms: the k maps in host memory, passed in
  // the launch's parameters (args.maps is then null): no copy queued before the kernel.
  const double* host_maps = nullptr;
  DeviceBuffer<float>* scratch = nullptr;         // scheme-private working memory
  DeviceBuffer<double>* scratch_double = nullptr;
};

void run_scheme1(const SchemeLaunch& l);   // global-memory atomics
void run_scheme2(const SchemeLaunch& l);   // per-thread shadow histograms in global memory
void run_scheme3a(const SchemeLaunch& l);  // per-block shared histograms, merged by atomics
void run_scheme3b(const SchemeLaunch& l);  // per-block shared histograms, merged by a reduction
void run_scheme4(const SchemeLaunch& l);   // per-warp shared histograms
void run_scheme5(const SchemeLaunch& l);   // presorted reference, conflict-free
void run_fused(const SchemeLaunch& l);     // ours: batched, span-walking, deterministic, finishes itself

// After scheme1..scheme5: the costs from the double sums, which it zeroes (cr_finish.cuh).
void finish_double_sums(const SchemeLaunch& l);

// scheme5's preprocessing: sorts the voxels with weight > 0 by bin (Thrust) and cuts the runs
// of each bin into chunks of at most `max_workload` voxels. Fills the layout's sorted/chunks
// fields with buffers it owns through the given DeviceBuffers.
struct PresortBuffers {
  DeviceBuffer<uint32_t> sorted;
  DeviceBuffer<int4> chunks;
  DeviceBuffer<int> bin_first_chunk;
};
void presort_reference(const int32_t* host_bins, const std::vector<uint32_t>& active, int bins,
                       int max_workload, cudaStream_t stream, PresortBuffers& buffers,
                       ReferenceLayouts& layouts);

// fused's preprocessing: the reference's spans (reference_spans.hpp), uploaded from the
// caller's memory (the stream must be synchronised before `spans` dies), and the kernel's
// occupancy for this block size and bin count.
struct FusedBuffers {
  DeviceBuffer<int4> spans;
  DeviceBuffer<uint16_t> bins;
  DeviceBuffer<float> ref_weight;
  DeviceBuffer<unsigned long long> population;  // prepare_fused_from_device: voxels per bin
};
void prepare_fused(const ReferenceSpans& spans, int threads_per_block, int bins, cudaStream_t stream,
                   FusedBuffers& buffers, FusedLayout& layout);

// The same layout for an unweighted reference already in device memory (RP_EXT_DEVICE_IMAGE):
// its spans are its rows, its bins binned on the device with the host's arithmetic, the hot bin
// picked from their populations as on the host. Synchronises `stream`.
void prepare_fused_from_device(const float* values, const regpipe_common::Grid& grid,
                               const regpipe_common::IntensityBinning& binning, int threads_per_block,
                               cudaStream_t stream, FusedBuffers& buffers, FusedLayout& layout);

// Loads fused's kernels (both weightings, both readers, the row spans) now rather than at their
// first launches (regpipe_common_cuda/kernel_loading.hpp).
void load_fused_kernels();

// Shared memory of one block of scheme4: a float histogram (3 sums per bin) per warp.
// Checked against the device limit when the instance is created.
inline std::size_t per_warp_histogram_bytes(int threads_per_block, int bins) {
  return std::size_t(threads_per_block / 32) * std::size_t(bins) * kSumsPerBin * sizeof(float);
}

// Shared memory of one block of fused: 3 sums per bin, two 32-bit words each (24.6 KB at the
// largest bin count, 1024: within every device's default 48 KB).
inline std::size_t fused_histogram_bytes(int bins) { return std::size_t(bins) * kSumsPerBin * 2 * sizeof(unsigned); }

// The most samples one fused block adds to its shared histogram: the low words of its entries
// (16 bits a sample) stay below 2^32. Spans are at most this long (set_reference checks).
constexpr uint32_t kMaxBlockSamples = 65536;
// The most transforms whose maps fused takes in its launch parameters (96 bytes each).
constexpr std::size_t kFusedInlineMaps = 4;
constexpr std::size_t kMaxGridY = 65535;

// Blocks for a grid-stride pass over `work` items: enough to fill the GPU, no more than
// the work needs.
inline int grid_blocks(const SchemeLaunch& l, std::size_t work, int fill_factor = 4) {
  if (l.blocks > 0) return l.blocks;
  const std::size_t needed = (work + std::size_t(l.threads_per_block) - 1) / std::size_t(l.threads_per_block);
  const std::size_t fill = std::size_t(l.sm_count) * std::size_t(fill_factor);
  return int(needed < fill ? (needed > 0 ? needed : 1) : fill);
}

}  // namespace regpipe::cost_cr_cuda
