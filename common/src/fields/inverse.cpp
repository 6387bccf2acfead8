#include <regpipe_common/fields/inverse.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace regpipe_common {
namespace {

struct PlaneResidual {
  double max = 0.0, sum = 0.0;
};

bool same_geometry(const FieldGeometry& a, const FieldGeometry& b) {
  return a.dims.nx == b.dims.nx && a.dims.ny == b.dims.ny && a.dims.nz == b.dims.nz &&
         std::memcmp(a.voxel_to_world, b.voxel_to_world, sizeof a.voxel_to_world) == 0;
}

// One pass: the residual r(x) = v(x) + u(x + v(x)) of the iterate v, and the next iterate
// v - r = -u(x + v(x)) written to `next`.
PlaneResidual residual_and_next(const DisplacementFieldView& u, const DisplacementField& v,
                                DisplacementField& next, Execution execution) {
  const FieldGeometry& geometry = u.geometry;
  const Grid& g = geometry.dims;
  const DisplacementFieldView current = view_of(v);
  std::vector<PlaneResidual> planes(std::size_t(g.nz));
  for_each_plane(g.nz, execution, [&](int z) {
    PlaneResidual& plane = planes[std::size_t(z)];
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = std::size_t(x) + std::size_t(g.nx) * (std::size_t(y) + std::size_t(g.ny) * z);
        const Vec3 vi = vector_at(current, i);
        const Vec3 pulled = sample_displacement(u, world_of_voxel(geometry, x, y, z) + vi);
        const double r = norm(vi + pulled);
        plane.max = std::max(plane.max, r);
        plane.sum += r;
        next.vectors[3 * i] = float(-pulled.x);
        next.vectors[3 * i + 1] = float(-pulled.y);
        next.vectors[3 * i + 2] = float(-pulled.z);
      }
  });
  PlaneResidual total;
  for (const PlaneResidual& p : planes) {
    total.max = std::max(total.max, p.max);
    total.sum += p.sum;
  }
  return total;
}

}  // namespace

void check_inverse_options(const InverseOptions& options) {
  if (options.max_iterations < 0)
    throw rp::Error(RP_INVALID_ARGUMENT, "inverse max_iterations " + std::to_string(options.max_iterations) +
                                             " is negative");
  if (options.min_iterations < 0)
    throw rp::Error(RP_INVALID_ARGUMENT, "inverse min_iterations " + std::to_string(options.min_iterations) +
                                             " is negative");
  if (!(options.mean_residual_mm >= 0.0))
    throw rp::Error(RP_INVALID_ARGUMENT, "inverse mean_residual_mm " + std::to_string(options.mean_residual_mm) +
                                             " must be at least 0");
  if (!(options.max_residual_mm >= 0.0))
    throw rp::Error(RP_INVALID_ARGUMENT, "inverse max_residual_mm " + std::to_string(options.max_residual_mm) +
                                             " must be at least 0");
}

InverseResult invert_displacement_field(const DisplacementFieldView& u, const InverseOptions& options,
                                        const DisplacementField* initial_guess, Execution execution) {
  check_inverse_options(options);
  if (initial_guess && !same_geometry(initial_guess->geometry, u.geometry))
    throw rp::Error(RP_INVALID_ARGUMENT, "the initial guess of a field inverse lies on another grid than the field");

  InverseResult result{initial_guess ? *initial_guess : zero_field(u.geometry)};
  DisplacementField next = zero_field(u.geometry);
  const double voxels = double(voxel_count(u.geometry.dims));
  for (;;) {
    const PlaneResidual r = residual_and_next(u, result.inverse, next, execution);
    result.max_residual_mm = r.max;
    result.mean_residual_mm = r.sum / voxels;
    result.converged = r.max <= options.max_residual_mm ||
                       (options.mean_residual_mm > 0.0 && result.mean_residual_mm <= options.mean_residual_mm);
    if ((result.converged && result.iterations >= options.min_iterations) ||
        result.iterations == options.max_iterations)
      return result;
    std::swap(result.inverse, next);
    ++result.iterations;
  }
}

}  // namespace regpipe_common
