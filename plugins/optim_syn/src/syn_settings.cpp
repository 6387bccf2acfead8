#include "syn_settings.hpp"

#include "syn_params.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace regpipe::optim_syn {
namespace {

[[noreturn]] void refuse(const std::string& message) { throw rp::Error(RP_INVALID_ARGUMENT, message); }

double read_number(const rp::Params& params, SynParam p) { return params.get_number(kSynParams[p]); }

}  // namespace

std::vector<double> parse_schedule(const char* name, const std::string& text, bool integers) {
  const std::string where = std::string(name) + "=\"" + text + "\"";
  std::vector<double> out;
  if (text.empty()) refuse(where + ": empty; write one value per level, coarsest first, as 100x70x50x20");
  for (const char* suffix : {"vox", "mm"})
    if (text.size() >= std::strlen(suffix) && text.compare(text.size() - std::strlen(suffix), std::string::npos, suffix) == 0)
      refuse(where + ": give the unit with smoothing_in_mm (true: mm, false: voxels), not as a suffix");
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find('x', begin);
    const std::string item = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (item.empty()) refuse(where + ": an empty entry; write values separated by 'x', as 100x70x50x20");
    errno = 0;
    char* stop = nullptr;
    const double v = std::strtod(item.c_str(), &stop);
    if (stop == item.c_str() || *stop != '\0' || errno != 0 || !std::isfinite(v))
      refuse(where + ": '" + item + "' is not a number");
    if (integers && v != std::floor(v)) refuse(where + ": '" + item + "' is not a whole number");
    out.push_back(v);
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (out.size() > 32) refuse(where + ": more than 32 levels");
  return out;
}

regpipe_common::syn::SynOptions syn_options_from(const rp::Params& params) {
  regpipe_common::syn::SynOptions o;
  o.gradient_step = read_number(params, kGradientStep);
  if (!(o.gradient_step > 0.0)) refuse("gradient_step=0 must be above 0");
  o.update_field_variance_in_voxel_space = read_number(params, kUpdateFieldVariance);
  o.total_field_variance_in_voxel_space = read_number(params, kTotalFieldVariance);
  o.convergence_threshold = read_number(params, kConvergenceThreshold);
  o.convergence_window_size = int(read_number(params, kConvergenceWindow));
  o.smoothing_sigmas_in_mm = params.get_bool(kSynParams[kSmoothingInMm].name);

  const char* iterations_name = kSynParams[kIterations].name;
  const char* shrink_name = kSynParams[kShrinkFactors].name;
  const char* sigma_name = kSynParams[kSmoothingSigmas].name;
  const std::vector<double> iterations = parse_schedule(iterations_name, params.get_string(iterations_name), true);
  const std::vector<double> shrink = parse_schedule(shrink_name, params.get_string(shrink_name), true);
  const std::vector<double> sigmas = parse_schedule(sigma_name, params.get_string(sigma_name), false);
  if (iterations.size() != shrink.size() || iterations.size() != sigmas.size())
    refuse(std::string("iterations, shrink_factors and smoothing_sigmas must name the same levels: ") +
           std::to_string(iterations.size()) + ", " + std::to_string(shrink.size()) + " and " +
           std::to_string(sigmas.size()) + " values");
  o.levels.clear();
  bool any_iteration = false;
  for (std::size_t l = 0; l < iterations.size(); ++l) {
    const std::string level = " (level " + std::to_string(l + 1) + ")";
    if (iterations[l] < 0 || iterations[l] > 100000)
      refuse(std::string(iterations_name) + ": " + std::to_string(long(iterations[l])) + level +
             " is outside [0, 100000]");
    if (shrink[l] < 1 || shrink[l] > 64)
      refuse(std::string(shrink_name) + ": " + std::to_string(long(shrink[l])) + level + " is outside [1, 64]");
    if (sigmas[l] < 0 || sigmas[l] > 50)
      refuse(std::string(sigma_name) + ": " + std::to_string(sigmas[l]) + level + " is outside [0, 50]");
    any_iteration = any_iteration || iterations[l] > 0;
    o.levels.push_back({int(iterations[l]), int(shrink[l]), sigmas[l]});
  }
  if (!any_iteration) refuse(std::string(iterations_name) + ": every level has 0 iterations");
  return o;
}

}  // namespace regpipe::optim_syn
