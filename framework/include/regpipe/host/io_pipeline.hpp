// Ordered, bounded hand-over between the thread that registers and the threads that read and
// write image files, for batch mode: the next moving images are read while one registers, and
// each result's files are encoded and written while the next registers. With zero worker
// threads both classes run their work inline, in order, on the calling thread (the sequential
// batch), so that the two modes share one code path.
//
// Only file work belongs on the workers: nothing here may call a plugin (plugin instances are
// "one call at a time", abi.h), and ITK's image formats must be registered (prepare_image_io)
// before the first worker starts.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace regpipe {

// Lowers the calling thread's scheduling priority (nice +10; Linux applies nice per thread),
// for the I/O workers: they take the cores a registration leaves idle (all of them while a
// GPU registers) without delaying its threads. A CPU cost splits each evaluation into one
// slab per core and waits for the slowest, so an I/O thread that holds a core at equal
// priority stalls every evaluation: on 2 cores with cpu.cr, three writers at equal priority
// made a batch 2.5 times slower. Failing to lower it (it cannot, short of a sandbox) is harmless.
inline void lower_thread_priority() {
  (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
}

// Produces items, in the order `next` hands out their ids (nullopt: no more), with
// produce(id) on `threads` worker threads, never more than `ahead` items past the last one
// taken (bounding the memory they hold); take() hands them over in that order, nullopt after
// the last, and rethrows an item's exception there, so that a failing item fails only itself.
// `next` runs under a lock, one call at a time (a batch worker asks its supervisor there).
template <class T>
class ReadAhead {
 public:
  ReadAhead(size_t threads, size_t ahead, std::function<std::optional<size_t>()> next,
            std::function<T(size_t)> produce)
      : ahead_(ahead < 1 ? 1 : ahead), next_item_(std::move(next)), produce_(std::move(produce)) {
    for (size_t t = 0; t < threads; ++t)
      workers_.emplace_back([this] {
        lower_thread_priority();
        work();
      });
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;
  // Starts no new item; waits for the items in progress (an abandoned batch, Ctrl-C).
  ~ReadAhead() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& w : workers_) w.join();
  }

  // The next item in order (blocks until it is produced), or its exception; nullopt when
  // there are no more.
  std::optional<T> take() {
    if (workers_.empty()) {  // sequential: produce it here
      const std::optional<size_t> id = next_item_();
      if (!id) return std::nullopt;
      return produce_(*id);
    }
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return slots_.count(taken_) != 0 || (end_ && taken_ >= *end_); });
    const auto it = slots_.find(taken_);
    if (it == slots_.end()) return std::nullopt;
    Slot slot = std::move(it->second);
    slots_.erase(it);
    ++taken_;
    lock.unlock();
    changed_.notify_all();  // a worker may start the next item
    if (slot.error) std::rethrow_exception(slot.error);
    return std::move(*slot.value);
  }

 private:
  struct Slot {
    std::optional<T> value;
    std::exception_ptr error;
  };

  void work() {
    for (;;) {
      size_t position = 0, id = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || end_ || next_ < taken_ + ahead_; });
        if (stop_ || end_) return;
        const std::optional<size_t> item = next_item_();  // under the lock: positions in order
        if (!item) {
          end_ = next_;
          lock.unlock();
          changed_.notify_all();
          return;
        }
        position = next_++;
        id = *item;
      }
      Slot slot;
      try {
        slot.value.emplace(produce_(id));
      } catch (...) {
        slot.error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex_);
        slots_.emplace(position, std::move(slot));
      }
      changed_.notify_all();
    }
  }

  const size_t ahead_;
  std::function<std::optional<size_t>()> next_item_;
  std::function<T(size_t)> produce_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<size_t, Slot> slots_;  // produced and not taken, by position
  size_t next_ = 0;               // the position of the next item a worker starts
  size_t taken_ = 0;              // items handed over
  std::optional<size_t> end_;     // the position `next` said no more at
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

// Runs submitted jobs on `threads` worker threads, at most `capacity` of them submitted and
// not finished (submit blocks beyond that, bounding the memory the jobs hold); each job's
// `done` runs after its `work`, in submission order, one at a time, on whichever thread
// completes the gap. `work` must report its own errors (an escaping exception is kept and
// rethrown by drain()); `done` must not throw nor call this object (it runs under its lock).
class WriteBehind {
 public:
  WriteBehind(size_t threads, size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {
    for (size_t t = 0; t < threads; ++t)
      workers_.emplace_back([this] {
        lower_thread_priority();
        work();
      });
  }
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;
  // Finishes every job submitted (their files are the results of registrations already
  // done), then stops the workers.
  ~WriteBehind() {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return finished_ == submitted_; });
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& w : workers_) w.join();
  }

  // Queues `work` (may be empty: only `done`, kept in order) and returns; blocks while
  // `capacity` jobs with work are unfinished. Returns the seconds it waited.
  double submit(std::function<void()> work, std::function<void()> done) {
    if (workers_.empty()) {  // sequential: run it here
      if (work) run_guarded(work);
      std::lock_guard lock(mutex_);
      const size_t index = submitted_++;
      complete(index, std::move(done));
      return 0.0;
    }
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    if (work) changed_.wait(lock, [&] { return unfinished_work_ < capacity_; });
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const size_t index = submitted_++;
    if (!work) {
      complete(index, std::move(done));
    } else {
      ++unfinished_work_;
      queue_.push_back({index, std::move(work), std::move(done)});
    }
    lock.unlock();
    changed_.notify_all();
    return waited;
  }

  // Waits until every submitted job is done; rethrows an exception a `work` let escape.
  void drain() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return finished_ == submitted_; });
    if (escaped_) std::rethrow_exception(std::exchange(escaped_, nullptr));
  }

 private:
  struct Job {
    size_t index;
    std::function<void()> work, done;
  };

  void run_guarded(const std::function<void()>& work) {
    try {
      work();
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!escaped_) escaped_ = std::current_exception();
    }
  }

  // With the mutex held: records job `index` as finished and runs every `done` now in order.
  void complete(size_t index, std::function<void()> done) {
    completed_.emplace(index, std::move(done));
    for (auto it = completed_.find(finished_); it != completed_.end();
         it = completed_.find(finished_)) {
      if (it->second) it->second();
      completed_.erase(it);
      ++finished_;
    }
  }

  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stop_ and nothing left
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      run_guarded(job.work);
      {
        std::lock_guard lock(mutex_);
        --unfinished_work_;
        complete(job.index, std::move(job.done));
      }
      changed_.notify_all();
    }
  }

  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  std::map<size_t, std::function<void()>> completed_;  // finished out of order, waiting
  size_t submitted_ = 0, finished_ = 0, unfinished_work_ = 0;
  std::exception_ptr escaped_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace regpipe
