// How the field operations spread their work: over z-planes, each plane computed whole by one
// thread and per-plane partial results combined in plane order, so every result is bitwise
// the same serial or parallel, on any number of cores. Serial exists for callers that are
// already parallel and for the tests that prove that claim.
#pragma once

#include <regpipe_common/execution.hpp>
#include <regpipe_common/parallel_slabs.hpp>

#include <cstddef>

namespace regpipe_common {

template <class PlaneWork>
void for_each_plane(int planes, Execution execution, const PlaneWork& work) {
  if (execution == Execution::serial) {
    for (int z = 0; z < planes; ++z) work(z);
    return;
  }
  parallel_slabs(std::size_t(planes), [&](std::size_t z) { work(int(z)); });
}

}  // namespace regpipe_common
