// What a local search moves at the current level: the directions of its degrees of freedom,
// scaled to the level's typical steps, and FLIRT's per-parameter tolerances.
#pragma once

#include "local_search.hpp"

#include <string>

namespace regpipe::flirt {

// The DOF of a local search: 6, 7, 9, 12 as in abi.h, plus the initial search's 4 (three
// translations and one global scale) and 3 (translations only, when the pipeline's DOF is 6
// and the scale must stay fixed).
constexpr unsigned kTranslationsAndScale = 4;

// The local search settings for `dof` at the current level. Directions are the DOF basis
// (rp::dof_basis) scaled by `typical_step` (a tied scale gets the mean of its three steps,
// so the scales stay tied); tolerance_i = tolerance_voxels * typical_step_i, which for half
// a voxel is Jenkinson & Smith's (2001) eq. 32-35: translations n/2, rotations, scales and
// skews n/(2R) for voxels of n mm and a brain radius R. Throws RP_INVALID_ARGUMENT for a
// typical step of a free parameter that is not positive and finite.
LocalSearchSettings search_settings(unsigned dof, const double* typical_step,
                                    double tolerance_voxels, int max_iterations);

// "4dof", "7dof", ...: the DOF part of a stage name.
std::string dof_label(unsigned dof);

}  // namespace regpipe::flirt
