// The validated parameters of one cost instance.
#pragma once

#include "param_schema.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/execution.hpp>

namespace regpipe::cost_cpu {

enum class Interpolation { kTrilinear, kNearest };

struct Settings {
  int bins = 0;  // 0 for measures without histograms (NCC, LS)
  Interpolation interpolation = Interpolation::kTrilinear;
  double border_mm = 0.0;
  double head_weight_mm = 0.0;  // 0: off; else both images weighted by their smooth head masks
  bool partial_volume = false;
  unsigned threads = 1;  // resolved: hardware concurrency for the parameter's 0
};

// Serial for one thread, else spread over the cores (results are the same either way).
inline regpipe_common::Execution execution_of(const Settings& s) {
  return s.threads > 1 ? regpipe_common::Execution::parallel : regpipe_common::Execution::serial;
}

// Reads every parameter of `schema` from `params`, re-checking ranges and choices against
// the schema (rp::Error RP_INVALID_ARGUMENT naming parameter and value).
Settings read_settings(const rp::Params& params, ParamList schema);

}  // namespace regpipe::cost_cpu
