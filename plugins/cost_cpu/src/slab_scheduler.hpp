// Deterministic threading: every transform's sums are accumulated slab by slab, each slab
// from zero, and the slab sums are added up in slab order. Which worker ran which slab never
// shows in the result, so costs are bitwise identical for any thread count.
#pragma once

#include "slab_partition.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <system_error>
#include <thread>
#include <vector>

namespace regpipe::cost_cpu {

// The partial sums of every slab and their total, reused across evaluations. Each slab's sums
// start on a cache line of their own, at least a line away from the next slab's, so workers
// never write to the same line (such false sharing more than halves the throughput of two
// threads) and cpu.cr's 32-byte bins never straddle two lines (cr_groups_avx2.hpp).
class SlabWorkspace {
 public:
  SlabWorkspace() = default;
  SlabWorkspace(std::size_t slab_count, std::size_t sums_size)
      : slab_count_(slab_count),
        sums_size_(sums_size),
        stride_((sums_size + kCacheLineDoubles - 1) / kCacheLineDoubles * kCacheLineDoubles +
                kCacheLineDoubles),
        partial_(slab_count * stride_ + kCacheLineDoubles),
        partial_overlap_(slab_count * kCacheLineDoubles),
        total_(sums_size) {}

  // Zeroed sums of one slab.
  double* fresh_sums(std::size_t slab) {
    double* s = slabs() + slab * stride_;
    std::fill(s, s + sums_size_, 0.0);
    return s;
  }
  void set_overlap(std::size_t slab, double weight) {
    partial_overlap_[slab * kCacheLineDoubles] = weight;
  }

  // Adds the slabs up in slab order.
  void merge() {
    clear_total();
    for (std::size_t slab = 0; slab < slab_count_; ++slab) add_to_total(slab);
  }
  // The same sum built one slab at a time, for a workspace of one slab reused for every slab
  // of a transform: clear_total(), then fresh_sums(0) / set_overlap(0, ...) / add_to_total(0)
  // per slab in slab order adds exactly what merge() adds, in merge()'s order.
  void clear_total() {
    std::fill(total_.begin(), total_.end(), 0.0);
    total_overlap_ = 0.0;
  }
  void add_to_total(std::size_t slab) {
    const double* s = slabs() + slab * stride_;
    for (std::size_t i = 0; i < sums_size_; ++i) total_[i] += s[i];
    total_overlap_ += partial_overlap_[slab * kCacheLineDoubles];
  }
  std::size_t sums_size() const { return sums_size_; }
  const double* total() const { return total_.data(); }
  double total_overlap() const { return total_overlap_; }

 private:
  static constexpr std::size_t kCacheLineDoubles = 64 / sizeof(double);
  // The first slab's sums: partial_'s first cache-line start (found on every call, since a
  // copy of the workspace holds its vector elsewhere).
  double* slabs() {
    const auto misalignment = reinterpret_cast<std::uintptr_t>(partial_.data()) % 64;
    return partial_.data() + (misalignment == 0 ? 0 : (64 - misalignment) / sizeof(double));
  }
  std::size_t slab_count_ = 0, sums_size_ = 0, stride_ = 0;
  std::vector<double> partial_, partial_overlap_, total_;
  double total_overlap_ = 0.0;
};

// Transform-parallel form of run_slabs, for batches of at least two transforms per worker:
// each worker takes whole transforms and runs their slabs in order on its own one-slab lane,
// so no worker waits for another between transforms (at the coarse levels a transform is a
// few hundred microseconds, a barrier per transform a large part of it). The sums are those
// of the slab-parallel form bit for bit (SlabWorkspace::add_to_total). Cancellation is polled
// by the calling thread before each of its transforms; the others stop at their next one.
template <class Accumulate, class Finish, class ShouldStop>
bool run_transforms(std::size_t count, const SlabPartition& slabs, std::vector<SlabWorkspace>& lanes,
                    const Accumulate& accumulate, const Finish& finish,
                    const ShouldStop& should_stop) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stopped{false};
  auto work = [&](SlabWorkspace& lane, bool polls_cancel) {
    for (std::size_t t; !stopped.load(std::memory_order_relaxed) &&
                        (t = next.fetch_add(1, std::memory_order_relaxed)) < count;) {
      if (polls_cancel && should_stop()) {
        stopped.store(true, std::memory_order_relaxed);
        break;
      }
      lane.clear_total();
      for (std::size_t s = 0; s < slabs.count(); ++s) {
        lane.set_overlap(0, accumulate(t, slabs.z_begin[s], slabs.z_begin[s + 1], lane.fresh_sums(0)));
        lane.add_to_total(0);
      }
      finish(t, lane);
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(lanes.size() - 1);
  for (std::size_t w = 1; w < lanes.size(); ++w) {
    try {
      helpers.emplace_back([&, w] { work(lanes[w], false); });
    } catch (const std::system_error&) {
      break;  // no thread to spare: the others take its transforms
    }
  }
  work(lanes[0], true);
  for (std::thread& t : helpers) t.join();
  return !stopped.load(std::memory_order_relaxed);
}

// Runs transforms 0..count-1 in order on up to `threads` workers (never more than slabs):
//   double accumulate(transform, z_begin, z_end, double* zeroed_sums)  for every slab,
//          returning the slab's overlap weight;
//   void finish(transform, const SlabWorkspace& merged)  once per transform, after merge();
//   bool should_stop()                                    before each transform.
// All three run on worker threads or inside the barrier and must not throw (finish possibly on
// several threads at once, for different transforms). Returns false when should_stop() ended
// the run early. A batch of at least two transforms per worker runs transform-parallel on
// `lanes` (one-slab workspaces, kept for the next call); the results are the same bit for bit.
template <class Accumulate, class Finish, class ShouldStop>
bool run_slabs(std::size_t count, const SlabPartition& slabs, SlabWorkspace& workspace,
               std::vector<SlabWorkspace>& lanes, unsigned threads, const Accumulate& accumulate,
               const Finish& finish, const ShouldStop& should_stop) {
  const unsigned lane_count = std::max(threads, 1u);
  if (lane_count > 1 && count >= 2 * std::size_t(lane_count)) {
    if (lanes.size() != lane_count || lanes[0].sums_size() != workspace.sums_size())
      lanes.assign(lane_count, SlabWorkspace(1, workspace.sums_size()));
    return run_transforms(count, slabs, lanes, accumulate, finish, should_stop);
  }
  const std::size_t slab_count = slabs.count();
  std::atomic<std::size_t> next_slab{0};
  std::size_t transform = 0;
  bool stop = count == 0 || should_stop();
  if (stop) return count == 0;

  // Runs once per transform, after every worker finished its slabs and before any continues.
  auto complete_transform = [&]() noexcept {
    workspace.merge();
    finish(transform, workspace);
    ++transform;
    next_slab.store(0, std::memory_order_relaxed);
    stop = transform == count || should_stop();
  };
  auto work = [&](const auto& wait_for_all) {
    while (!stop) {
      for (std::size_t s; (s = next_slab.fetch_add(1, std::memory_order_relaxed)) < slab_count;)
        workspace.set_overlap(s, accumulate(transform, slabs.z_begin[s], slabs.z_begin[s + 1],
                                            workspace.fresh_sums(s)));
      wait_for_all();
    }
  };

  const unsigned workers = unsigned(std::min<std::size_t>(std::max(threads, 1u), slab_count));
  if (workers == 1) {
    work(complete_transform);
    return transform == count;
  }
  std::barrier sync(std::ptrdiff_t(workers), complete_transform);
  auto wait = [&] { sync.arrive_and_wait(); };
  std::vector<std::thread> helpers;
  helpers.reserve(workers - 1);
  for (unsigned w = 1; w < workers; ++w) {
    try {
      helpers.emplace_back([&] { work(wait); });
    } catch (const std::system_error&) {
      sync.arrive_and_drop();  // no thread to spare: carry on with fewer workers
    }
  }
  work(wait);
  for (std::thread& t : helpers) t.join();
  return transform == count;
}

}  // namespace regpipe::cost_cpu
