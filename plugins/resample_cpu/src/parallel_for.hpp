// A minimal fork-join loop: plugins cannot link libregpipe's thread pool, and the work here
// (slices, rows of lines) is coarse enough that one std::thread per core per call is cheap.
#pragma once

#include <cstddef>
#include <functional>

namespace regpipe::resample {

// Hardware threads when `requested` is 0, else `requested`.
unsigned thread_count(unsigned requested);

// Runs body(i) for every i in [0, count) on up to `threads` threads, handing out indices one
// at a time. `cancelled` is polled before each index; once it returns true the remaining
// indices are skipped and rp::Error(RP_CANCELLED) is thrown. A worker's exception stops the
// others and is rethrown here.
void parallel_for(size_t count, unsigned threads, const std::function<bool()>& cancelled,
                  const std::function<void(size_t)>& body);

}  // namespace regpipe::resample
