#include "search_space.hpp"

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace regpipe::flirt {
namespace {

bool moves_a_rotation(const std::array<double, RP_PARAM_COUNT>& basis) {
  return basis[0] != 0.0 || basis[1] != 0.0 || basis[2] != 0.0;
}

std::vector<std::array<double, RP_PARAM_COUNT>> basis_of(unsigned dof) {
  if (dof != kTranslationsAndScale) return rp::dof_basis(dof);
  auto basis = rp::dof_basis(7);
  basis.erase(std::remove_if(basis.begin(), basis.end(), moves_a_rotation), basis.end());
  return basis;
}

}  // namespace

LocalSearchSettings search_settings(unsigned dof, const double* typical_step,
                                    double tolerance_voxels, int max_iterations) {
  LocalSearchSettings s;
  s.max_iterations = max_iterations;
  for (const auto& basis : basis_of(dof)) {
    double sum = 0.0;
    int count = 0;
    for (size_t i = 0; i < basis.size(); ++i) {
      if (basis[i] == 0.0) continue;
      const double step = typical_step[i];
      if (!(step > 0.0) || !std::isfinite(step)) {
        char value[64];
        std::snprintf(value, sizeof value, "%g", step);
        throw rp::Error(RP_INVALID_ARGUMENT, "objective typical_step[" + std::to_string(i) +
                                                 "]=" + value + " must be positive and finite");
      }
      sum += step;
      ++count;
    }
    Point d{};
    for (size_t i = 0; i < basis.size(); ++i) d[i] = basis[i] * (sum / count);
    s.directions.push_back(d);
  }
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i) s.tolerance[i] = tolerance_voxels * typical_step[i];
  return s;
}

std::string dof_label(unsigned dof) { return std::to_string(dof) + "dof"; }

}  // namespace regpipe::flirt
