// The launch shape shared by the schemes in which a block counts a run of consecutive
// reference voxels of one transform: runs along grid.x, transforms along grid.y, and the
// transforms cut into launches of at most 65 535 (grid.y's limit).
#pragma once

#include "schemes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace regpipe::cost_mi_cuda {

struct BlockRuns {
  uint32_t run;     // reference voxels per block
  unsigned blocks;  // blocks per transform (grid.x)
};

// Runs of at most `max_run` voxels (rounded up to a multiple of `multiple`; callers pass a
// max_run that is one), no shorter than a block's width, numerous enough that the k
// transforms together give the device about `blocks_per_sm` blocks an SM.
inline BlockRuns block_runs(const SchemeLaunch& l, std::size_t max_run, std::size_t multiple, int blocks_per_sm) {
  const std::size_t voxels = l.voxel_count;
  const std::size_t wanted = std::max<std::size_t>(1, std::size_t(blocks_per_sm) * std::size_t(l.sm_count) / l.k);
  std::size_t run = std::min(max_run, (voxels + wanted - 1) / wanted);
  run = std::max<std::size_t>(run, std::size_t(l.threads_per_block));
  run = (run + multiple - 1) / multiple * multiple;
  return {uint32_t(run), unsigned(std::max<std::size_t>(1, (voxels + run - 1) / run))};
}

// Calls launch(first_transform, count) for consecutive batches of at most 65 535 transforms.
template <class Launch>
void for_each_transform_batch(std::size_t k, Launch&& launch) {
  constexpr std::size_t kMaxGridY = 65535;
  for (std::size_t first = 0; first < k; first += kMaxGridY)
    launch(int(first), unsigned(std::min(kMaxGridY, k - first)));
}

}  // namespace regpipe::cost_mi_cuda
