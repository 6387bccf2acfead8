// optim.syn's parameters turned into regpipe_common's SynOptions, every value re-checked
// (create's contract: the host's validation may be bypassed).
#pragma once

#include <regpipe/plugin.hpp>
#include <regpipe_common/syn/syn_options.hpp>

#include <string>
#include <vector>

namespace regpipe::optim_syn {

// "100x70x50x20" as numbers, coarsest level first. Throws rp::Error(RP_INVALID_ARGUMENT)
// naming `name` for an empty list, an empty or non-numeric entry, a non-finite value, or
// (with `integers`) a fractional one.
std::vector<double> parse_schedule(const char* name, const std::string& text, bool integers);

// The options SyN runs with (metric_function left unset). Throws rp::Error(RP_INVALID_ARGUMENT)
// naming the parameter: out of its schema range, a zero gradient_step, schedules of different
// lengths, a negative iteration count, a shrink factor below 1, a negative sigma.
regpipe_common::syn::SynOptions syn_options_from(const rp::Params& params);

}  // namespace regpipe::optim_syn
