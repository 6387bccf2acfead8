#include "settings.hpp"

#include <regpipe_common/usable_cores.hpp>

#include <cstring>
#include <string>

namespace regpipe::cost_cpu {
namespace {

bool is(const rp_param_desc& p, const char* name) { return std::strcmp(p.name, name) == 0; }

Interpolation read_interpolation(const rp::Params& params, const rp_param_desc& p) {
  const std::string v = params.get_string(p.name);
  if (v == "trilinear") return Interpolation::kTrilinear;
  if (v == "nearest") return Interpolation::kNearest;
  throw rp::Error(RP_INVALID_ARGUMENT,
                  std::string(p.name) + "=" + v + " is not one of trilinear, nearest");
}

unsigned resolve_threads(long long requested) {
  if (requested > 0) return unsigned(requested);
  return regpipe_common::usable_cores();
}

}  // namespace

Settings read_settings(const rp::Params& params, ParamList schema) {
  Settings s;
  for (std::size_t i = 0; i < schema.count; ++i) {
    const rp_param_desc& p = schema.params[i];
    if (is(p, "bins"))
      s.bins = int(params.get_number(p));
    else if (is(p, "interpolation"))
      s.interpolation = read_interpolation(params, p);
    else if (is(p, "border_mm"))
      s.border_mm = params.get_number(p);
    else if (is(p, "head_weight_mm"))
      s.head_weight_mm = params.get_number(p);
    else if (is(p, "partial_volume"))
      s.partial_volume = params.get_bool(p.name);
    else if (is(p, "threads"))
      s.threads = resolve_threads(static_cast<long long>(params.get_number(p)));
  }
  // Partial volume replaces interpolation of the moving intensity by spreading each sample over
  // its trilinear neighbours; nearest-neighbour sampling has no such neighbours to spread over.
  if (s.partial_volume && s.interpolation == Interpolation::kNearest)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "partial_volume=true spreads each sample over its 8 trilinear neighbours and "
                    "cannot be combined with interpolation=nearest; use interpolation=trilinear");
  return s;
}

}  // namespace regpipe::cost_cpu
