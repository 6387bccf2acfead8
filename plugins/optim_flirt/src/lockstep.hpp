// Independent local searches advancing in lockstep: each round, the points that every waiting
// search asks for go to the objective in ONE call, and each search resumes with its share of
// the costs. A stage of N searches therefore costs about as many objective calls as its
// longest search needs rounds, not N times that: the lever for GPU costs, whose price per
// call hardly depends on the batch size (ARCHITECTURE.md, issue 5).
#pragma once

#include "batch_objective.hpp"
#include "local_search.hpp"
#include "point.hpp"

#include <vector>

namespace regpipe::flirt {

// Whether searches send speculative points with their requests (local_search.cpp): never,
// always, or while the objective finds extra points in a call cheap (BatchObjective).
enum class Speculation { kAuto, kOn, kOff };

// One local search from every start with the same settings; results in the order of
// `starts`. Throws what the objective or a search throws. Speculation changes the number of
// calls and evaluations, never a search's path or result.
std::vector<Scored> run_lockstep(BatchObjective& objective, const std::vector<Start>& starts,
                                 const LocalSearchSettings& settings,
                                 Speculation speculation = Speculation::kOff);

}  // namespace regpipe::flirt
