#include <regpipe/host/level_schedule.hpp>

#include <algorithm>
#include <cmath>

namespace regpipe {

double min_sampling_mm(const std::optional<double>& setting, const Image& reference, const Image* moving) {
  if (setting) return *setting;
  double floor_mm = reference.spacing().minCoeff();
  if (moving != nullptr) floor_mm = std::max(floor_mm, moving->spacing().minCoeff());
  // A spacing is a column norm of the header's matrix (2.4999999999 mm for 2.5): the level
  // runs at the size the header states, to the micrometre (1e-3 mm).
  return std::round(floor_mm * 1e3) / 1e3;
}

std::vector<SampledLevel> sampled_levels(const std::vector<double>& declared, double floor_mm) {
  // Voxel sizes from headers carry rounding (0.9999998 mm): a level within this of the floor
  // is taken as the floor, so a 1 mm image keeps its 1 mm level unchanged.
  constexpr double kSameMm = 1e-4;
  std::vector<SampledLevel> out;
  for (size_t i = 0; i < declared.size(); ++i) {
    const double mm = declared[i] < floor_mm - kSameMm ? floor_mm : declared[i];
    if (!out.empty() && std::abs(out.back().mm - mm) <= kSameMm) continue;
    out.push_back({mm, i});
  }
  return out;
}

}  // namespace regpipe
