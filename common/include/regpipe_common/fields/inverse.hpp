// Inverse of a displacement field by fixed-point iteration (Chen et al. 2008, "A simple
// fixed-point approach to invert a deformation field", Med Phys 35:81), as ANTs'
// InvertDisplacementFieldImageFilter keeps SyN's inverse: v_{n+1}(x) = -u(x + v_n(x)).
// It converges where the map is a contraction, i.e. |grad u| < 1: any smooth diffeomorphic
// field of a registration.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

namespace regpipe_common {

struct InverseOptions {
  int max_iterations = 20;         // ANTs' default
  double max_residual_mm = 0.001;  // stop once every voxel's residual is at most this
  // Also stop once the mean residual is at most this (0: never). ITK's
  // InvertDisplacementFieldImageFilter, as ANTs' SyN drives it, stops on whichever of the two
  // tolerances is met first (max 0.1, mean 0.001 voxels).
  double mean_residual_mm = 0.0;
  // Updates made even when the initial guess already meets a tolerance. ITK's inverter always
  // makes at least one (1): a warm start that lags the field by less than the tolerance (a
  // SyN step of 0.1 voxel against a 0.1 voxel tolerance) would otherwise never move.
  int min_iterations = 0;
};

// Throws rp::Error(RP_INVALID_ARGUMENT) for a negative iteration count or tolerance; the CPU and
// the device inversions take the same options.
void check_inverse_options(const InverseOptions& options);

struct InverseResult {
  DisplacementField inverse;  // on u's grid
  int iterations = 0;         // updates made
  // Residual of the returned inverse v: r(x) = |v(x) + u(x + v(x))|, i.e. how far the map
  // "v then u" (compose_first_then_second(v, u)) moves the grid point x, in mm.
  double max_residual_mm = 0.0;
  double mean_residual_mm = 0.0;
  bool converged = false;     // either tolerance of the options met
};

// Inverts u on its own grid, starting from `initial_guess` (same grid as u; e.g. the previous
// SyN iteration's inverse) or from zero when null. Iterations update every voxel from the
// previous iterate only (Jacobi), so the result does not depend on the voxel order or thread
// count. Throws rp::Error(RP_INVALID_ARGUMENT) for max_iterations < 0, a negative tolerance
// or an initial guess on another grid.
InverseResult invert_displacement_field(const DisplacementFieldView& u, const InverseOptions& options,
                                        const DisplacementField* initial_guess = nullptr,
                                        Execution execution = Execution::parallel);

}  // namespace regpipe_common
