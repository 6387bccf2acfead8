// adaptive (Brosch & Tam 2009, "self-optimizing histogram"): a histogram configuration gives
// each joint bin a level l in 0..6 (section 2.3): 0 = not cached, its samples go straight to
// the global histogram; l >= 1 = cached in shared memory as 2^(l-1) counters, lane j of a warp
// using copy j mod 2^(l-1), so 2^(6-l) lanes share one counter (l = 6: one counter per lane).
// The configuration is computed on the host from a previous histogram by the paper's greedy
// optimisation: starting from level 0 everywhere, raise the level of the bin with the greatest
// expected cost decrease per byte (eqs. 4-10: global updates, shared-memory collisions of
// the lanes sharing a counter, global collisions of uncached bins) while shared memory lasts.
// The first evaluation after set_reference / set_moving is not optimised (every bin at level 1
// while memory lasts); its first transform's histogram is copied back and configures the next
// evaluations, and again every adaptive_refresh calls when that is > 0. The configuration only
// decides where counts are kept, never what is counted: exact and bitwise repeatable.
// Adapted for Hopper: the paper's counters are bytes whose high bits carry a thread tag (its
// software mutex, no atomics on its GPU) and which are flushed to global memory on overflow;
// here they are 16-bit counters, two a word, updated with native shared atomicAdd, and a block
// counts at most 65 535 samples so that none can overflow (no tag bits, no flushes; the
// paper's b_max becomes 2^16). At the end a block adds each cached bin's copies to global
// memory. 227 KB hold 116 224 such counters: all 256 x 256 bins at level 1 with room to spare
// for the busy ones. The cost constants are ours (the paper gives none).
#include "block_runs.hpp"

#include <regpipe_common_cuda/cuda_check.hpp>
#include <regpipe_common_cuda/pinned_buffer.hpp>

#include <algorithm>
#include <cmath>
#include <queue>
#include <utility>

namespace regpipe::cost_mi_cuda {
namespace {

constexpr uint32_t kMaxRun = 65535;  // samples a block counts: a 16-bit counter cannot overflow
constexpr int kMaxLevel = 6;         // 32 copies: one per lane
// Relative costs of eq. 4 on Hopper (ours): a global atomic and a collision on one cost as
// much as 8 collisions on a shared-memory counter.
constexpr double kGlobalUpdate = 8.0, kSharedCollision = 1.0, kGlobalCollision = 8.0;
constexpr double kCounterRange = 65536.0;  // b_max of a cached bin (eq. 5)

// Config word of a joint bin: first counter << 3 | level.
__host__ __device__ constexpr uint32_t copies_of(uint32_t level) { return level == 0 ? 0u : 1u << (level - 1); }

__global__ void adaptive_kernel(MiArgs a, const uint32_t* __restrict__ config, const uint32_t* __restrict__ cached,
                                uint32_t cached_count, uint32_t counters, uint32_t voxels, uint32_t run,
                                int first_transform) {
  extern __shared__ unsigned words[];  // `counters` 16-bit counters, counter c in half c % 2 of word c / 2
  for (uint32_t i = threadIdx.x; i < (counters + 1) / 2; i += blockDim.x) words[i] = 0u;
  __syncthreads();

  const int t = first_transform + int(blockIdx.y);
  const double* m = a.maps + 12 * std::size_t(t);
  unsigned* joint = a.joint + std::size_t(t) * std::size_t(a.bins) * std::size_t(a.bins);
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t begin = blockIdx.x * run;
  const uint32_t end = min(begin + run, voxels);
  for (uint32_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const int bin = joint_bin(a, m, i);
    if (bin < 0) continue;
    const uint32_t c = __ldg(config + bin), level = c & 7u;
    if (level == 0) {
      atomicAdd(joint + bin, 1u);
      continue;
    }
    const uint32_t counter = (c >> 3) + (lane & (copies_of(level) - 1u));
    atomicAdd(words + counter / 2, 1u << (16 * (counter & 1u)));
  }
  __syncthreads();

  for (uint32_t j = threadIdx.x; j < cached_count; j += blockDim.x) {
    const uint32_t bin = cached[j], c = config[bin], first = c >> 3;
    unsigned total = 0u;
    for (uint32_t k = 0; k < copies_of(c & 7u); ++k)
      total += (words[(first + k) / 2] >> (16 * ((first + k) & 1u))) & 0xffffu;
    if (total != 0u) atomicAdd(joint + bin, total);
  }
}

// Expected collisions per update when n threads each hit a bin with probability p (eq. 8 / n).
double collisions(double p, double n) { return (n * p + std::expm1(n * std::log1p(-p))) / n; }

class AdaptiveState : public SchemeState {
 public:
  explicit AdaptiveState(const SchemeOptions& o)
      : refresh_every_(o.adaptive_refresh),
        budget_(uint32_t(o.shared_per_block / 2)),
        threads_total_(double(o.sm_count) * double(o.threads_per_block)) {}

  void reference_changed(const std::vector<uint16_t>&, int, cudaStream_t) override { optimised_ = false; }
  void moving_changed() override { optimised_ = false; }

  // Before the launch: the configuration to count with.
  void configure(const SchemeLaunch& l) {
    if (optimised_ || unoptimised_on_device_) return;
    const std::size_t entries = std::size_t(l.args.bins) * std::size_t(l.args.bins);
    std::vector<uint8_t> level(entries, 0);
    for (std::size_t b = 0; b < entries && b < budget_; ++b) level[b] = 1;
    upload(level, l.stream);
    unoptimised_on_device_ = true;
  }

  // After the launch: copies the first transform's histogram back when a configuration is due.
  void fetch(const SchemeLaunch& l) {
    fetch_ = !optimised_ || (refresh_every_ > 0 && calls_ >= refresh_every_);
    if (!fetch_) return;
    const std::size_t entries = std::size_t(l.args.bins) * std::size_t(l.args.bins);
    histogram_.ensure(entries);
    RP_CUDA_CHECK(cudaMemcpyAsync(histogram_.get(), l.args.joint, entries * sizeof(unsigned), cudaMemcpyDeviceToHost,
                                  l.stream));
  }

  void evaluated(const SchemeLaunch& l) override {
    ++calls_;
    if (!fetch_) return;
    const std::size_t entries = std::size_t(l.args.bins) * std::size_t(l.args.bins);
    double total = 0.0;
    for (std::size_t b = 0; b < entries; ++b) total += histogram_.get()[b];
    if (total == 0.0) return;  // transform 0 had no overlap: nothing to learn from, try again next call
    upload(optimise(histogram_.get(), entries, total), l.stream);
    optimised_ = true;
    unoptimised_on_device_ = false;
    calls_ = 0;
  }

  regpipe_common_cuda::DeviceBuffer<uint32_t> config_, cached_;
  uint32_t counters_ = 0;

 private:
  // The paper's greedy optimisation: levels for every bin from histogram h (total h_sum).
  std::vector<uint8_t> optimise(const unsigned* h, std::size_t entries, double h_sum) const {
    const auto cost = [&](uint32_t level, double hits) {
      const double p = hits / h_sum;
      if (level == 0) return kGlobalUpdate * hits + kGlobalCollision * h_sum * collisions(p, threads_total_);
      const double sharing = double(32u >> (level - 1));  // lanes per counter: 2^(6 - l)
      return kGlobalUpdate * hits / kCounterRange + kSharedCollision * h_sum * collisions(p, sharing);
    };
    std::vector<uint8_t> level(entries, 0);
    std::priority_queue<std::pair<double, uint32_t>> steps;  // (cost decrease per counter, bin)
    const auto offer = [&](uint32_t b) {
      const uint32_t l = level[b];
      if (l >= uint32_t(kMaxLevel)) return;
      const double gain = cost(l, h[b]) - cost(l + 1, h[b]);
      if (gain > 0.0) steps.push({gain / double(copies_of(l + 1) - copies_of(l)), b});
    };
    for (uint32_t b = 0; b < entries; ++b)
      if (h[b] != 0u) offer(b);
    uint32_t left = budget_;
    while (!steps.empty() && left > 0) {
      const uint32_t b = steps.top().second;
      steps.pop();
      const uint32_t need = copies_of(level[b] + 1u) - copies_of(level[b]);
      if (need > left) continue;  // this bin cannot grow; smaller steps of others may still fit
      ++level[b];
      left -= need;
      offer(b);
    }
    return level;
  }

  // Lays the cached bins' counters out in bin order and uploads config, cached list and count.
  void upload(const std::vector<uint8_t>& level, cudaStream_t stream) {
    config_host_.assign(level.size(), 0u);
    cached_host_.clear();
    uint32_t next = 0;
    for (std::size_t b = 0; b < level.size(); ++b) {
      if (level[b] == 0) continue;
      config_host_[b] = next << 3 | level[b];
      next += copies_of(level[b]);
      cached_host_.push_back(uint32_t(b));
    }
    counters_ = next;
    config_.upload(config_host_, stream);
    cached_.upload(cached_host_, stream);
  }

  int refresh_every_;
  uint32_t budget_;  // 16-bit counters that fit in a block's shared memory
  double threads_total_;
  bool optimised_ = false, unoptimised_on_device_ = false, fetch_ = false;
  int calls_ = 0;  // evaluations since the configuration was computed
  std::vector<uint32_t> config_host_, cached_host_;  // kept: the uploads read them asynchronously
  regpipe_common_cuda::PinnedBuffer<unsigned> histogram_;
};

}  // namespace

std::unique_ptr<SchemeState> make_adaptive_state(const SchemeOptions& o) { return std::make_unique<AdaptiveState>(o); }

void run_adaptive(const SchemeLaunch& l) {
  auto& state = static_cast<AdaptiveState&>(*l.state);
  state.configure(l);
  const std::size_t bytes = (std::size_t(state.counters_) + 1) / 2 * sizeof(unsigned);
  RP_CUDA_CHECK(cudaFuncSetAttribute(adaptive_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  const BlockRuns runs = block_runs(l, kMaxRun, 1, 4);
  const uint32_t cached_count = uint32_t(state.cached_.size());
  for_each_transform_batch(l.k, [&](int first, unsigned count) {
    adaptive_kernel<<<dim3(runs.blocks, count), l.threads_per_block, bytes, l.stream>>>(
        l.args, state.config_.get(), state.cached_.get(), cached_count, state.counters_, l.voxel_count, runs.run,
        first);
    RP_CUDA_CHECK_LAUNCH("adaptive_kernel");
  });
  state.fetch(l);
}

}  // namespace regpipe::cost_mi_cuda
