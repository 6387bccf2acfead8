// optim.flirt's parameters, read and cross-checked once in `create`.
#pragma once

#include "lockstep.hpp"

#include <regpipe/plugin.hpp>

#include <array>

namespace regpipe::flirt {

// Defaults and ranges live in the schema (entry.cpp), not here.
struct SearchRange {
  double min_deg = 0.0, max_deg = 0.0;
};

struct FlirtSettings {
  std::array<SearchRange, 3> search{};  // about x, y, z: FLIRT's -searchrx/-searchry/-searchrz
  double coarse_step_deg = 0.0;         // -coarsesearch
  double fine_step_deg = 0.0;           // -finesearch
  bool nosearch = false;                // -nosearch
  double tolerance_voxels = 0.0;        // local searches, in voxels of their level
  double final_tolerance_voxels = 0.0;  // the last pass of the schedule
  bool adaptive_brackets = true;        // the last pass's brackets follow the last moves
  int max_iterations = 0;               // Powell iterations per local search
  Speculation speculate = Speculation::kAuto;  // in the stages of one search (2 and 1 mm)
};

// Throws rp::Error(RP_INVALID_ARGUMENT) naming the parameter and its value: a value outside
// its schema range, a search range whose minimum exceeds its maximum, a step larger than a
// search range it has to cover.
FlirtSettings read_settings(const rp::Params& params);

}  // namespace regpipe::flirt
