// FLIRT's four-stage schedule over the pipeline's levels (Jenkinson & Smith 2001, section 4;
// Jenkinson et al. 2002, section 4; as summarised by Li & Kumar 2014, section II.B):
//   stage 1 (8 mm)  the rotation search of initial_search.hpp -> three candidates;
//   stage 2 (4 mm)  each candidate and ten perturbations of it (half the fine step about each
//                   axis; scale +-0.1, +-0.2) optimised at 7 DOF in lockstep; the best kept;
//   stage 3 (2 mm)  7, then 9, then 12 DOF as the pipeline's DOF allows;
//   stage 4 (1 mm)  a final pass at the full DOF.
#pragma once

#include "batch_objective.hpp"
#include "flirt_settings.hpp"
#include "point.hpp"

#include <regpipe/abi.h>

#include <cstdint>
#include <vector>

namespace regpipe::flirt {

// Which level each stage runs at. Stage k (1-based) takes level k-1, or the finest when there
// are fewer levels; every level after the third gets a stage-4 pass. FLIRT's 8/4/2/1 mm map
// one to one; with 8/4/2 there is no stage 4 (stage 3's last pass is the final one); with a
// single level all stages run at it.
struct LevelPlan {
  uint32_t initial = 0;
  uint32_t perturbation = 0;
  uint32_t refinement = 0;
  std::vector<uint32_t> final_passes;
};

LevelPlan plan_levels(uint32_t level_count);

// Runs the schedule from `start` with the pipeline's `dof` (6, 7, 9 or 12). Returns the result
// of the last pass and its cost at the finest level.
Scored run_schedule(BatchObjective& objective, const rp_host* host, const FlirtSettings& settings,
                    const Point& start, unsigned dof, uint32_t level_count);

}  // namespace regpipe::flirt
