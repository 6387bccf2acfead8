#include <regpipe_common/fields/scaling_squaring.hpp>

#include <regpipe_common/fields/composition.hpp>
#include <regpipe_common/resample_request.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace regpipe_common {
namespace {

constexpr int kMaxSquarings = 30;

double smallest_spacing_mm(const FieldGeometry& g) {
  double smallest = INFINITY;
  for (int axis = 0; axis < 3; ++axis) smallest = std::min(smallest, axis_spacing(g.voxel_to_world, axis));
  return smallest;
}

}  // namespace

int squarings_for(const DisplacementField& velocity, double max_step_voxels) {
  const double step_mm = max_step_voxels * smallest_spacing_mm(velocity.geometry);
  double largest = max_displacement_mm(velocity);
  int n = 0;
  for (; largest > step_mm && n < kMaxSquarings; ++n) largest /= 2.0;
  return n;
}

DisplacementField exponentiate_velocity(const DisplacementField& velocity, int squarings, Execution execution) {
  if (squarings < 0 || squarings > kMaxSquarings)
    throw rp::Error(RP_INVALID_ARGUMENT, "scaling and squaring with " + std::to_string(squarings) +
                                             " squarings; use 0 to " + std::to_string(kMaxSquarings));
  view_of(velocity);  // checks the geometry and the vector count
  DisplacementField d = velocity;
  const float scale = float(std::ldexp(1.0, -squarings));  // a power of two: exact in float
  for (float& c : d.vectors) c *= scale;
  for (int s = 0; s < squarings; ++s) {
    const DisplacementFieldView dv = view_of(d);
    d = compose_first_then_second(dv, dv, execution);
  }
  return d;
}

}  // namespace regpipe_common
