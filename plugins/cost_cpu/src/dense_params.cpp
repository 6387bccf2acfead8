#include "dense_params.hpp"

#include <cmath>
#include <string>

namespace regpipe::cost_cpu {

double checked_number(const rp::Params& params, ParamList schema, const char* name) {
  const rp_param_desc* p = regpipe_common::find_param(schema, name);
  if (p == nullptr) throw rp::Error(RP_INTERNAL, std::string("no parameter ") + name + " in this component's schema");
  const double v = p->type == RP_PARAM_INT ? double(params.get_int(name)) : params.get_double(name);
  if (!std::isfinite(v)) throw rp::Error(RP_INVALID_ARGUMENT, std::string(name) + " is not a finite number");
  rp::Params::check_range(name, v, p->min, p->max);
  return v;
}

bool second_choice(const rp::Params& params, const char* name, const char* first, const char* second) {
  const std::string v = params.get_string(name);
  if (v != first && v != second)
    throw rp::Error(RP_INVALID_ARGUMENT, std::string(name) + "=" + v + " is not one of " + first + ", " + second);
  return v == second;
}

}  // namespace regpipe::cost_cpu
