// The QA picture's whole-volume passes (gradient, edges, coverage) slice by slice on all
// cores: each voxel's result depends on the input only, so the picture is the same on any
// machine. (On one thread, qa.png added about 1 s to a run on an H100 host.)
#pragma once

#include <regpipe_common/parallel_slabs.hpp>

#include <algorithm>
#include <cstdint>

namespace regpipe {

template <class Work>
void for_each_slice(uint32_t slices, const Work& work) {
  const size_t slabs = std::min<size_t>(slices, 64);
  regpipe_common::parallel_slabs(slabs, [&](size_t s) {
    const auto first = uint32_t(regpipe_common::slab_begin(slices, slabs, s));
    const auto end = uint32_t(regpipe_common::slab_begin(slices, slabs, s + 1));
    for (uint32_t z = first; z < end; ++z) work(z);
  });
}

}  // namespace regpipe
