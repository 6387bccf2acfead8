#include <regpipe_common/fields/random_diffeomorphism.hpp>

#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/fields/scaling_squaring.hpp>

#include <regpipe/plugin.hpp>

#include <cmath>
#include <random>
#include <string>

namespace regpipe_common {
namespace {

constexpr double kRelativeTolerance = 1e-4;
constexpr int kMaxRescalings = 20;
// Squarings beyond the half-voxel rule: a finer first step, so the truth field is accurate.
constexpr int kExtraSquarings = 2;

DisplacementField tapered_smooth_noise(const FieldGeometry& geometry, const RandomDiffeomorphismOptions& options,
                                       Execution execution) {
  DisplacementField v = zero_field(geometry);
  std::mt19937_64 rng(options.seed);
  for (float& c : v.vectors) c = float(double(rng() >> 11) * 0x1p-53 * 2.0 - 1.0);
  smooth_field_gaussian(v, options.smoothing_sigma_voxels, execution);
  const Grid& g = geometry.dims;
  auto taper = [](int i, int n) {  // exactly 0 on the border planes, where sin(pi) is 1e-16
    return n == 1 ? 1.0 : (i == 0 || i == n - 1) ? 0.0 : std::sin(M_PI * i / (n - 1));
  };
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const double t = taper(x, g.nx) * taper(y, g.ny) * taper(z, g.nz);
        float* u = v.vectors.data() + 3 * (x + std::size_t(g.nx) * (y + std::size_t(g.ny) * z));
        for (int c = 0; c < 3; ++c) u[c] = float(u[c] * t);
      }
  return v;
}

DisplacementField scaled(const DisplacementField& v, double s) {
  DisplacementField out = v;
  for (float& c : out.vectors) c = float(c * s);
  return out;
}

}  // namespace

RandomDiffeomorphism random_smooth_diffeomorphism(const FieldGeometry& geometry,
                                                  const RandomDiffeomorphismOptions& options, Execution execution) {
  const double target = options.max_displacement_mm;
  if (!(target > 0.0 && std::isfinite(target)))
    throw rp::Error(RP_INVALID_ARGUMENT, "random diffeomorphism max_displacement_mm " + std::to_string(target) +
                                             " must be positive and finite");
  const DisplacementField noise = tapered_smooth_noise(geometry, options, execution);
  const double noise_max = max_displacement_mm(noise);
  if (!(noise_max > 0.0))
    throw rp::Error(RP_INVALID_ARGUMENT, "random diffeomorphism: the border taper leaves nothing on a grid with an "
                                         "axis of 2 voxels");
  double s = target / noise_max;
  RandomDiffeomorphism result{scaled(noise, s), {}, 0};
  result.squarings = squarings_for(result.velocity) + kExtraSquarings;
  for (int step = 0; step < kMaxRescalings; ++step) {
    result.velocity = scaled(noise, s);
    result.displacement = exponentiate_velocity(result.velocity, result.squarings, execution);
    const double reached = max_displacement_mm(result.displacement);
    if (std::fabs(reached - target) <= kRelativeTolerance * target) return result;
    s *= target / reached;
  }
  throw rp::Error(RP_INTERNAL, "random diffeomorphism: max displacement did not settle at " + std::to_string(target) +
                                   " mm in " + std::to_string(kMaxRescalings) + " rescalings");
}

}  // namespace regpipe_common
