#include "parallel_for.hpp"

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>
#include <regpipe_common/usable_cores.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace regpipe::resample {

unsigned thread_count(unsigned requested) {
  if (requested > 0) return requested;
  return regpipe_common::usable_cores();
}

void parallel_for(size_t count, unsigned threads, const std::function<bool()>& cancelled,
                  const std::function<void(size_t)>& body) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> was_cancelled{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      for (size_t i = next++; i < count && !stop; i = next++) {
        if (cancelled()) {
          was_cancelled = true;
          stop = true;
          break;
        }
        body(i);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  const size_t n = std::min<size_t>(thread_count(threads), count);
  std::vector<std::thread> pool;
  try {
    for (size_t t = 1; t < n; ++t) pool.emplace_back(worker);
  } catch (...) {  // no thread to be had: let the started ones finish, then report
    stop = true;
    for (std::thread& t : pool) t.join();
    throw;
  }
  worker();  // the calling thread works too
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  if (was_cancelled) throw rp::Error(RP_CANCELLED, "resampling cancelled");
}

}  // namespace regpipe::resample
