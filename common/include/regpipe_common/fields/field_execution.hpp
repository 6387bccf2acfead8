// How the field operations spread their work: over z-planes, each plane computed whole by one
// thread and per-plane partial results combined in plane order, so every result is bitwise
// the same serial or parallel, on any number of cores.
#pragma once

#include <regpipe_common/execution.hpp>

#include <cstddef>

namespace regpipe_common {

template <class PlaneWork>
void for_each_plane(int planes, Execution execution, const PlaneWork& work) {
  for_each_index(std::size_t(planes), execution, [&](std::size_t z) { work(int(z)); });
}

}  // namespace regpipe_common
