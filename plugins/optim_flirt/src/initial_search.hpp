// Stage 1 of FLIRT's schedule, at the coarsest level (Jenkinson & Smith 2001, section 4.3;
// Jenkinson et al. 2002, section 4.3): the search over rotations.
//   1. coarse grid: a local search of translations and global scale from every grid rotation
//      (rotation fixed), all in lockstep;
//   2. fine grid: every fine rotation evaluated once, in ONE objective call, with translations
//      interpolated from the coarse results and the median coarse scale;
//   3. the best three local minima of the fine grid optimised with rotations free.
#pragma once

#include "batch_objective.hpp"
#include "flirt_settings.hpp"
#include "point.hpp"
#include "stage_log.hpp"

#include <vector>

namespace regpipe::flirt {

// The candidates the search keeps for the next level.
constexpr size_t kCandidates = 3;

// Named stages it opens: 3, or 2 when the rotation grid is a single point (nosearch).
int initial_search_stages(const FlirtSettings& settings);

// Searches around `start` (grid angles are added to its rotations) at the objective's current
// level, with the pipeline's `dof` (6, 7, 9 or 12): with 6 the scale never moves. Returns at
// most kCandidates points, optimised at min(dof, 7), lowest cost first.
std::vector<Scored> initial_search(BatchObjective& objective, StageLog& log,
                                   const FlirtSettings& settings, const Point& start, unsigned dof);

}  // namespace regpipe::flirt
