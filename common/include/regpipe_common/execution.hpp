// Whether a numeric routine spreads its work over threads. The routines that take it give the
// same result bit for bit either way; serial is for callers that are already parallel and for
// the tests that prove that claim.
#pragma once

#include <regpipe_common/parallel_slabs.hpp>

#include <cstddef>

namespace regpipe_common {

enum class Execution { parallel, serial };

// Calls work(i) for every i in [0, count): in order on this thread, or spread over threads by
// parallel_slabs. Each i is one independent piece of work (a plane, a slab of voxels).
template <class Work>
void for_each_index(std::size_t count, Execution execution, const Work& work) {
  if (execution == Execution::serial) {
    for (std::size_t i = 0; i < count; ++i) work(i);
    return;
  }
  parallel_slabs(count, work);
}

}  // namespace regpipe_common
