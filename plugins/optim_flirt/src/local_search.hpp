// FLIRT's local optimiser: Powell's direction-set method whose line minimisations stop at a
// per-parameter tolerance tied to the level's voxel size (Jenkinson & Smith 2001, section 4.2,
// "resolution adapted Powell's method"). Written as a coroutine that asks a CostChannel for
// every cost, so that many searches can share each objective call (lockstep.hpp).
#pragma once

#include "coroutine.hpp"
#include "point.hpp"

#include <optional>
#include <vector>

namespace regpipe::flirt {

struct LocalSearchSettings {
  // The initial directions: the free subspace of the search, each scaled to a natural step
  // (one voxel of the level). Zero outside the subspace, so the rest never moves.
  std::vector<Point> directions;
  // Per parameter, in its own unit: the search ends when an iteration moves no parameter by
  // more than this, and each line search locates its minimum to within it.
  Point tolerance{};
  int max_iterations = 10;
  // Each direction's first bracket is +-1 (one natural step) in every iteration; with adaptive
  // brackets only in the first: later it is three times the direction's last move along its
  // line, at least half its tolerance (Brent's smallest step) and at most 1, and inside such a
  // bracket a line also ends once the parabola through its three lowest points places the
  // minimum within a quarter of the tolerance. For the final pass, whose later iterations
  // move a few tolerances (docs/flirt-search.md, "The final pass").
  bool adaptive_brackets = false;
};

// A point to start a search from, with its cost when that is already known.
struct Start {
  Point x{};
  std::optional<double> cost;
};

// Minimises from `start`; returns the lowest point it evaluated and its cost. The first
// request also carries the start's cost when it is unknown, together with the first bracket.
Task<Scored> local_search(CostChannel& channel, Start start, LocalSearchSettings settings);

}  // namespace regpipe::flirt
