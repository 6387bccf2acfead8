// The exponential of a stationary velocity field by scaling and squaring (Arsigny et al.
// 2006, "A Log-Euclidean framework for statistics on diffeomorphisms", MICCAI):
// exp(v) = exp(v / 2^N) o ... o exp(v / 2^N) (2^N times), with exp(v / 2^N) ~ id + v / 2^N
// and each squaring one self-composition d <- d + d(x + d(x)).
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

namespace regpipe_common {

// The fewest squarings N for which the first step v / 2^N is at most `max_step_voxels` of
// the field's smallest voxel spacing (the usual rule: a step of half a voxel keeps the
// first-order step accurate and invertible).
int squarings_for(const DisplacementField& velocity, double max_step_voxels = 0.5);

// exp(velocity) on the velocity's grid, as a displacement field. velocity is in world mm
// (LPS), sampled like a displacement field (zero outside its grid). Throws
// rp::Error(RP_INVALID_ARGUMENT) for squarings outside [0, 30].
DisplacementField exponentiate_velocity(const DisplacementField& velocity, int squarings,
                                        Execution execution = Execution::parallel);

}  // namespace regpipe_common
