// The split of the reference's z range into slabs: the unit of parallel work and of partial
// sums. It depends only on the reference and the size of a measure's sums, never on the
// thread count, which is what makes results bitwise identical for any number of threads.
#pragma once

#include <cstddef>
#include <vector>

namespace regpipe::cost_cpu {

struct SlabPartition {
  std::vector<int> z_begin{0, 1};  // slab s covers z in [z_begin[s], z_begin[s + 1])
  std::size_t count() const { return z_begin.size() - 1; }
};

// At most one slab per z plane and 64 slabs, fewer when 64 copies of the sums (e.g. a 1024^2
// joint histogram) would exceed 64 MiB.
SlabPartition make_slab_partition(int nz, std::size_t sums_size);

}  // namespace regpipe::cost_cpu
