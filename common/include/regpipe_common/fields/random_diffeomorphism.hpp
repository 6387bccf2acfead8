// Smooth random diffeomorphisms of known field, for the known-truth tests of issue 16:
// exp(v) of a random smooth stationary velocity v, scaled so that the displacement's largest
// magnitude is the one asked for.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

#include <cstdint>

namespace regpipe_common {

struct RandomDiffeomorphismOptions {
  std::uint64_t seed = 1;
  double smoothing_sigma_voxels = 4.0;  // of the noise: the length scale of the warp
  double max_displacement_mm = 6.0;     // of exp(v), reached within 0.01 %
};

struct RandomDiffeomorphism {
  DisplacementField velocity;      // v
  DisplacementField displacement;  // exp(v) = exponentiate_velocity(v, squarings)
  int squarings = 0;
};

// Uniform noise in [-1, 1] per component from std::mt19937_64(seed) (its output sequence is
// fixed by the standard, so a seed gives the same field on every platform), smoothed by
// smooth_field_gaussian, tapered by prod_axes sin(pi i / (n - 1)) so that v is zero on the
// border planes (the field stays continuous with the zero outside its grid), then scaled by
// rescaling steps s <- s * target / max |exp(s v)| until max |exp(v)| = max_displacement_mm
// (max |exp(s v)| is close to linear in s for smooth v). Whether the result folds depends on
// the length scale against the displacement: check jacobian_determinants. Throws
// rp::Error(RP_INVALID_ARGUMENT) for a non-positive or non-finite displacement, or a grid the
// taper leaves zero (an axis of 2 voxels).
RandomDiffeomorphism random_smooth_diffeomorphism(const FieldGeometry& geometry,
                                                  const RandomDiffeomorphismOptions& options,
                                                  Execution execution = Execution::parallel);

}  // namespace regpipe_common
