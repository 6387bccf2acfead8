// presorted (in the spirit of Chen et al. 2009 and Vetter & Westermann 2011, as Li & Kumar
// 2014 section III.E does it for CR): once per set_reference the reference voxels are sorted by
// reference bin and each bin's run is cut into segments of at most kSegmentVoxels voxels (Li &
// Kumar's per-block workload threshold, so the background row is shared by many blocks). A
// block owns one segment of one transform: every voxel it reads belongs to one reference bin,
// so its part of the joint histogram is a single row of `bins` counters in shared memory. Each
// block writes its row to its own slot of a workspace; a second kernel gives every (row,
// transform) to one block, which adds that row's segments in order and writes the row of the
// joint histogram once. No global atomics; integer counts: exact and bitwise repeatable.
// Adapted for Hopper: the sort is a stable counting sort on the host (the reference bins are
// there already; Li & Kumar sort on the GPU with Thrust and copy back to cut segments), and the
// lanes of a warp whose samples share a moving bin (mostly the background pair) add once through
// __match_any_sync and a native shared atomic, where Vetter & Westermann give "fat" bins extra
// counters.
#include "block_runs.hpp"

#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>

namespace regpipe::cost_mi_cuda {
namespace {

// Per-block workload threshold. A block also zeroes and writes `bins` counters, so segments are
// at least 8 x bins long: that work stays below an eighth of the counting.
constexpr uint32_t kSegmentVoxels = 4096;
// Workspace for the segments' rows of one launch; the k transforms go in batches that fit.
constexpr std::size_t kPartialBytes = std::size_t(256) << 20;

// {first sorted position, end, reference bin} of each segment.
struct Segment {
  uint32_t begin, end;
  int row;
};

class PresortedState : public SchemeState {
 public:
  void reference_changed(const std::vector<uint16_t>& ref_bins, int bins, cudaStream_t stream) override {
    // Stable counting sort: within a bin the voxels stay in raster order (coalesced, cached reads).
    std::vector<uint32_t> first(std::size_t(bins) + 1, 0u);
    for (uint16_t b : ref_bins) ++first[std::size_t(b) + 1];
    for (int b = 0; b < bins; ++b) first[std::size_t(b) + 1] += first[std::size_t(b)];
    std::vector<uint32_t> order(ref_bins.size()), next(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < ref_bins.size(); ++i) order[next[std::size_t(ref_bins[i])]++] = uint32_t(i);

    const uint32_t length = std::max<uint32_t>(kSegmentVoxels, 8u * uint32_t(bins));
    std::vector<Segment> segments;
    std::vector<uint32_t> row_first(std::size_t(bins) + 1, 0u);  // row r's segments: [row_first[r], row_first[r+1])
    for (int r = 0; r < bins; ++r) {
      row_first[std::size_t(r)] = uint32_t(segments.size());
      for (uint32_t b = first[std::size_t(r)]; b < first[std::size_t(r) + 1]; b += length)
        segments.push_back({b, std::min(b + length, first[std::size_t(r) + 1]), r});
    }
    row_first[std::size_t(bins)] = uint32_t(segments.size());
    order_.upload(order, stream);
    segments_.upload(segments, stream);
    row_first_.upload(row_first, stream);
    segment_count = uint32_t(segments.size());
    // The uploads read these host vectors asynchronously: wait before they go.
    RP_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  regpipe_common_cuda::DeviceBuffer<uint32_t> order_, row_first_;
  regpipe_common_cuda::DeviceBuffer<Segment> segments_;
  uint32_t segment_count = 0;
};

constexpr int kMaxThreads = 1024;

// Block (s, j): segment s under transform first_transform + j into its row of partials.
__global__ void __launch_bounds__(kMaxThreads)
    presorted_segments_kernel(MiArgs a, const uint32_t* order, const Segment* segments, uint32_t segment_count,
                              int first_transform, unsigned* partials) {
  extern __shared__ unsigned row[];  // bins counters
  for (int j = int(threadIdx.x); j < a.bins; j += int(blockDim.x)) row[j] = 0u;
  __syncthreads();
  const Segment s = segments[blockIdx.x];
  const double* m = a.maps + 12 * std::size_t(first_transform + int(blockIdx.y));
  const unsigned lane = threadIdx.x & 31u;
  // Every lane runs the same iterations (block-uniform bound) so the warp votes together.
  for (uint32_t base = s.begin; base < s.end; base += blockDim.x) {
    const uint32_t i = base + threadIdx.x;
    const int bin = i < s.end ? moving_bin(a, m, __ldg(order + i)) : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, bin);
    if (bin >= 0 && lane == unsigned(__ffs(peers) - 1)) atomicAdd(row + bin, unsigned(__popc(peers)));
  }
  __syncthreads();
  unsigned* out = partials + (std::size_t(blockIdx.y) * segment_count + blockIdx.x) * std::size_t(a.bins);
  for (int j = int(threadIdx.x); j < a.bins; j += int(blockDim.x)) out[j] = row[j];
}

// Block (r, j): row r of transform first_transform + j, its segments added in order.
__global__ void __launch_bounds__(kMaxThreads)
    presorted_rows_kernel(MiArgs a, const uint32_t* row_first, uint32_t segment_count, int first_transform,
                          const unsigned* partials) {
  const int r = int(blockIdx.x);
  const std::size_t bins = std::size_t(a.bins);
  unsigned* joint = a.joint + (std::size_t(first_transform + int(blockIdx.y)) * bins + std::size_t(r)) * bins;
  const unsigned* slots = partials + std::size_t(blockIdx.y) * segment_count * bins;
  const uint32_t from = row_first[r], to = row_first[r + 1];
  for (std::size_t j = threadIdx.x; j < bins; j += blockDim.x) {
    unsigned total = 0u;
    for (uint32_t s = from; s < to; ++s) total += slots[std::size_t(s) * bins + j];
    joint[j] = total;
  }
}

}  // namespace

std::unique_ptr<SchemeState> make_presorted_state(const SchemeOptions&) { return std::make_unique<PresortedState>(); }

void run_presorted(const SchemeLaunch& l) {
  const auto& state = static_cast<const PresortedState&>(*l.state);
  const std::size_t bins = std::size_t(l.args.bins);
  const std::size_t per_transform = std::max<std::size_t>(1, state.segment_count) * bins * sizeof(unsigned);
  const std::size_t batch = std::clamp<std::size_t>(kPartialBytes / per_transform, 1, 65535);
  l.scratch->ensure(std::min(batch, l.k) * per_transform);
  auto* partials = reinterpret_cast<unsigned*>(l.scratch->get());
  const std::size_t shared = bins * sizeof(unsigned);
  for (std::size_t first = 0; first < l.k; first += batch) {
    const unsigned count = unsigned(std::min(batch, l.k - first));
    if (state.segment_count > 0) {
      presorted_segments_kernel<<<dim3(state.segment_count, count), l.threads_per_block, shared, l.stream>>>(
          l.args, state.order_.get(), state.segments_.get(), state.segment_count, int(first), partials);
      RP_CUDA_CHECK_LAUNCH("presorted_segments_kernel");
    }
    presorted_rows_kernel<<<dim3(unsigned(bins), count), l.threads_per_block, 0, l.stream>>>(
        l.args, state.row_first_.get(), state.segment_count, int(first), partials);
    RP_CUDA_CHECK_LAUNCH("presorted_rows_kernel");
  }
}

}  // namespace regpipe::cost_mi_cuda
