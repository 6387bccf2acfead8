// Runs work(slab) for slab = 0..slabs-1 on up to one thread per usable core. Callers cut
// their data into a fixed number of slabs and combine the per-slab results in slab order, so
// results never depend on the thread count. The first exception of any slab is rethrown.
#pragma once

#include <regpipe_common/usable_cores.hpp>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace regpipe_common {

template <class Work>
void parallel_slabs(std::size_t slabs, const Work& work) {
  const std::size_t threads = std::min<std::size_t>(slabs, usable_cores());
  if (threads <= 1) {
    for (std::size_t s = 0; s < slabs; ++s) work(s);
    return;
  }
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto run = [&](std::size_t first) {
    try {
      for (std::size_t s = first; s < slabs; s += threads) work(s);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  try {
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
  } catch (...) {  // no thread to spare: join those started, then report
    for (std::thread& t : pool) t.join();
    throw;
  }
  run(0);
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// Slab s of `count` items cut into `slabs` near-equal contiguous slabs: [first, end).
inline std::size_t slab_begin(std::size_t count, std::size_t slabs, std::size_t s) {
  return s * count / slabs;
}

}  // namespace regpipe_common
