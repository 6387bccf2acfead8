// The services the host hands to every plugin instance (rp_host): logging to stderr,
// progress, and cancellation (SIGINT sets the flag).
#pragma once

#include <regpipe/abi.h>

#include <atomic>
#include <functional>
#include <string>

namespace regpipe {

class HostServices {
 public:
  // Messages below `min_level` are dropped. With `show_progress`, progress goes to stderr: one
  // updating line on a terminal, else a line per 10% (a log or a pipe), never going backwards.
  explicit HostServices(int32_t min_level = RP_LOG_WARNING, bool show_progress = false);
  ~HostServices();
  HostServices(const HostServices&) = delete;
  HostServices& operator=(const HostServices&) = delete;
  const rp_host* abi() const { return &host_; }

  void log(int32_t level, const std::string& message);
  void progress(double fraction, const std::string& what);
  // Whether a run prints its summary on stdout: not with --quiet (errors only).
  bool reports_summaries() const { return min_level_ <= RP_LOG_WARNING; }
  bool cancel_requested() const { return cancel_.load(); }
  void request_cancel() { cancel_.store(true); }
  // The first SIGINT requests cancellation of these services, a second one ends the process
  // (through the signal thread of take_termination_signals where the process has one, else a
  // handler, exit status 130), until destroyed.
  void cancel_on_sigint();

 private:
  rp_host host_{};
  int32_t min_level_;
  bool show_progress_;
  bool terminal_;               // stderr is a terminal
  double shown_fraction_ = 0.0;  // the furthest shown in this registration
  int shown_step_ = 0;           // the last 10% step printed as a line
  std::atomic<bool> cancel_{false};
  bool cancels_on_sigint_ = false;
};

// One "regpipe <level>: <message>" line on stderr, never interleaved with another: for code
// that has no HostServices at hand (reading an image warns of a disagreeing qform and sform).
void write_log_line(int32_t level, const std::string& message);

}  // namespace regpipe
