// Deterministic threading: every transform's sums are accumulated slab by slab, each slab
// from zero, and the slab sums are added up in slab order. Which worker ran which slab never
// shows in the result, so costs are bitwise identical for any thread count.
#pragma once

#include "slab_partition.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace regpipe::cost_cpu {

// The partial sums of every slab and their total, reused across evaluations. Each slab's sums
// sit at least a cache line away from the next slab's, so workers never write to the same
// line (such false sharing more than halves the throughput of two threads).
class SlabWorkspace {
 public:
  SlabWorkspace() = default;
  SlabWorkspace(std::size_t slab_count, std::size_t sums_size)
      : slab_count_(slab_count),
        sums_size_(sums_size),
        stride_(sums_size + kCacheLineDoubles),
        partial_(slab_count * stride_),
        partial_overlap_(slab_count * kCacheLineDoubles),
        total_(sums_size) {}

  // Zeroed sums of one slab.
  double* fresh_sums(std::size_t slab) {
    double* s = &partial_[slab * stride_];
    std::fill(s, s + sums_size_, 0.0);
    return s;
  }
  void set_overlap(std::size_t slab, double weight) {
    partial_overlap_[slab * kCacheLineDoubles] = weight;
  }

  // Adds the slabs up in slab order.
  void merge() {
    std::fill(total_.begin(), total_.end(), 0.0);
    total_overlap_ = 0.0;
    for (std::size_t slab = 0; slab < slab_count_; ++slab) {
      const double* s = &partial_[slab * stride_];
      for (std::size_t i = 0; i < sums_size_; ++i) total_[i] += s[i];
      total_overlap_ += partial_overlap_[slab * kCacheLineDoubles];
    }
  }
  const double* total() const { return total_.data(); }
  double total_overlap() const { return total_overlap_; }

 private:
  static constexpr std::size_t kCacheLineDoubles = 64 / sizeof(double);
  std::size_t slab_count_ = 0, sums_size_ = 0, stride_ = 0;
  std::vector<double> partial_, partial_overlap_, total_;
  double total_overlap_ = 0.0;
};

// Runs transforms 0..count-1 in order on up to `threads` workers (never more than slabs):
//   double accumulate(transform, z_begin, z_end, double* zeroed_sums)  for every slab,
//          returning the slab's overlap weight;
//   void finish(transform, const SlabWorkspace& merged)  once per transform, after merge();
//   bool should_stop()                                    before each transform.
// All three run on worker threads or inside the barrier and must not throw. Returns false
// when should_stop() ended the run early.
template <class Accumulate, class Finish, class ShouldStop>
bool run_slabs(std::size_t count, const SlabPartition& slabs, SlabWorkspace& workspace,
               unsigned threads, const Accumulate& accumulate, const Finish& finish,
               const ShouldStop& should_stop) {
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
