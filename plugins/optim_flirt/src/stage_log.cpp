#include "stage_log.hpp"

#include <cstdio>

namespace regpipe::flirt {

std::string counted(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

void StageLog::begin(const std::string& what, const std::string& candidates) {
  char level[32];
  std::snprintf(level, sizeof level, "%gmm", objective_.level_mm());
  name_ = std::string(level) + " " + what + " (" + candidates + ")";
  objective_.begin_stage(name_);
  if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, progress) && host_->progress != nullptr)
    host_->progress(host_->ctx, planned_ > 0 ? double(begun_) / planned_ : -1.0, name_.c_str());
  ++begun_;
}

void StageLog::end(double best_cost) {
  const size_t evaluations = objective_.stage_evaluations(), calls = objective_.stage_calls();
  char line[512];
  std::snprintf(line, sizeof line,
                "optim.flirt %s: %zu evaluations in %zu objective calls (%.1f per call), %zu "
                "repeated points answered from memory, best cost %.6g; fastest calls at this "
                "level: %s",
                name_.c_str(), evaluations, calls, calls > 0 ? double(evaluations) / calls : 0.0,
                objective_.stage_repeats(), best_cost, objective_.fastest_calls().c_str());
  log(RP_LOG_INFO, line);
}

void StageLog::log(int32_t level, const std::string& message) const {
  if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, log) && host_->log != nullptr)
    host_->log(host_->ctx, level, message.c_str());
}

}  // namespace regpipe::flirt
