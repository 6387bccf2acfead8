// Reading the dense costs' parameters (cpu.lcc, cpu.mattes): each value re-checked against the
// component's published schema, as the host's validation does, so that a direct create() with a
// bad value is refused naming it.
#pragma once

#include "param_schema.hpp"

#include <regpipe/plugin.hpp>

namespace regpipe::cost_cpu {

// An int or double parameter of `schema`, finite and inside its range.
double checked_number(const rp::Params& params, ParamList schema, const char* name);

// One of the two choices of an enum parameter: false for the first, true for the second.
bool second_choice(const rp::Params& params, const char* name, const char* first, const char* second);

}  // namespace regpipe::cost_cpu
