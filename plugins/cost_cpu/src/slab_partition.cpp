#include "slab_partition.hpp"

#include <algorithm>

namespace regpipe::cost_cpu {
namespace {
constexpr std::size_t kMaxSlabs = 64;
constexpr std::size_t kSlabSumsBudgetBytes = std::size_t(64) << 20;
}  // namespace

SlabPartition make_slab_partition(int nz, std::size_t sums_size) {
  const std::size_t bytes_per_slab = (sums_size + 1) * sizeof(double);
  const std::size_t affordable = std::max<std::size_t>(1, kSlabSumsBudgetBytes / bytes_per_slab);
  const std::size_t count = std::min({std::size_t(nz), kMaxSlabs, affordable});
  SlabPartition p;
  p.z_begin.resize(count + 1);
  for (std::size_t s = 0; s <= count; ++s) p.z_begin[s] = int(s * std::size_t(nz) / count);
  return p;
}

}  // namespace regpipe::cost_cpu
