#include "flirt_settings.hpp"

#include "flirt_params.hpp"

#include <cstdio>
#include <string>

namespace regpipe::flirt {
namespace {

std::string format(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A numeric parameter, re-checked against the schema the host validated it with.
double read_number(const rp::Params& params, FlirtParam p) { return params.get_number(kFlirtParams[p]); }

void check_step_covers(FlirtParam step_param, double step, const char* axis,
                       const SearchRange& range) {
  const double width = range.max_deg - range.min_deg;
  if (width > 0.0 && step > width)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    std::string(kFlirtParams[step_param].name) + "=" + format(step) +
                        " is larger than the search range about " + axis + " (" +
                        format(range.min_deg) + ".." + format(range.max_deg) + ", " +
                        format(width) + " degrees): use a step of at most " + format(width));
}

}  // namespace

FlirtSettings read_settings(const rp::Params& params) {
  FlirtSettings s;
  const char* const axes[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    const auto min_param = static_cast<FlirtParam>(kSearchRxMin + 2 * a);
    const auto max_param = static_cast<FlirtParam>(kSearchRxMax + 2 * a);
    s.search[a] = {read_number(params, min_param), read_number(params, max_param)};
    if (s.search[a].min_deg > s.search[a].max_deg)
      throw rp::Error(RP_INVALID_ARGUMENT,
                      std::string(kFlirtParams[min_param].name) + "=" +
                          format(s.search[a].min_deg) + " is above " +
                          kFlirtParams[max_param].name + "=" + format(s.search[a].max_deg) +
                          ": the search range about " + axes[a] + " needs min <= max");
  }
  s.coarse_step_deg = read_number(params, kCoarseSearch);
  s.fine_step_deg = read_number(params, kFineSearch);
  for (int a = 0; a < 3; ++a) {
    check_step_covers(kCoarseSearch, s.coarse_step_deg, axes[a], s.search[a]);
    check_step_covers(kFineSearch, s.fine_step_deg, axes[a], s.search[a]);
  }
  s.nosearch = params.get_bool(kFlirtParams[kNoSearch].name);
  s.tolerance_voxels = read_number(params, kTolerance);
  s.final_tolerance_voxels = read_number(params, kFinalTolerance);
  s.adaptive_brackets = params.get_bool(kFlirtParams[kAdaptiveBrackets].name);
  s.max_iterations = static_cast<int>(read_number(params, kMaxIterations));
  const std::string speculate = params.get_string(kFlirtParams[kSpeculate].name);
  if (speculate == "on")
    s.speculate = Speculation::kOn;
  else if (speculate == "off")
    s.speculate = Speculation::kOff;
  else if (speculate == "auto")
    s.speculate = Speculation::kAuto;
  else
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "speculate=" + speculate + " is not one of auto, on, off");
  return s;
}

}  // namespace regpipe::flirt
