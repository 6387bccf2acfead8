#include <regpipe/host/host_services.hpp>
#include <regpipe/host/termination.hpp>

#include <algorithm>
#include <csignal>
#include <unistd.h>
#include <cstdio>
#include <mutex>

namespace regpipe {
namespace {

std::mutex g_output_mutex;  // log and progress lines from plugin threads must not interleave
std::atomic<HostServices*> g_sigint_target{nullptr};

// The first Ctrl-C asks the plugins to stop (should_cancel) and lets the run end cleanly; a
// second one ends the process at once, for a plugin that does not ask.
void on_sigint(int) {
  HostServices* s = g_sigint_target.load();
  if (s == nullptr) return;
  if (s->cancel_requested()) {
    static const char kMessage[] = "\nregpipe: interrupted again; ending now\n";
    (void)!::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
    ::_exit(130);
  }
  s->request_cancel();
}

const char* level_name(int32_t level) {
  switch (level) {
    case RP_LOG_DEBUG: return "debug";
    case RP_LOG_INFO: return "info";
    case RP_LOG_WARNING: return "warning";
    default: return "error";
  }
}

}  // namespace

HostServices::HostServices(int32_t min_level, bool show_progress)
    : min_level_(min_level), show_progress_(show_progress), terminal_(isatty(STDERR_FILENO) != 0) {
  host_.size = sizeof(rp_host);
  host_.abi_major = RP_ABI_MAJOR;
  host_.abi_minor = RP_ABI_MINOR;
  host_.ctx = this;
  host_.log = [](void* ctx, int32_t level, const char* message) {
    static_cast<HostServices*>(ctx)->log(level, message != nullptr ? message : "");
  };
  host_.progress = [](void* ctx, double fraction, const char* what) {
    static_cast<HostServices*>(ctx)->progress(fraction, what != nullptr ? what : "");
  };
  host_.should_cancel = [](void* ctx) -> int32_t {
    return static_cast<HostServices*>(ctx)->cancel_requested() ? 1 : 0;
  };
}

void HostServices::log(int32_t level, const std::string& message) {
  if (level < min_level_) return;
  write_log_line(level, message);
}

void write_log_line(int32_t level, const std::string& message) {
  std::lock_guard lock(g_output_mutex);
  std::fprintf(stderr, "regpipe %s: %s\n", level_name(level), message.c_str());
}

void HostServices::progress(double fraction, const std::string& what) {
  if (!show_progress_) return;
  std::lock_guard lock(g_output_mutex);
  // Plugins report each stage from its own start; what a person sees only goes forward.
  if (fraction >= 0.0) fraction = std::max(fraction, shown_fraction_);
  if (terminal_) {
    if (fraction >= 0.0)
      std::fprintf(stderr, "\r%-60s %5.1f%%", what.c_str(), 100.0 * fraction);
    else
      std::fprintf(stderr, "\r%-60s", what.c_str());
    if (fraction >= 1.0) std::fputc('\n', stderr);
  } else if (fraction >= 0.0) {
    // A log or a pipe: one line per 10% step, so that a job's log shows it as it goes.
    const int step = int(10.0 * std::min(fraction, 1.0));
    if (step > shown_step_) std::fprintf(stderr, "regpipe progress: %3d%% %s\n", 10 * step, what.c_str());
    shown_step_ = std::max(shown_step_, step);
  }
  std::fflush(stderr);
  shown_fraction_ = fraction >= 1.0 ? 0.0 : std::max(shown_fraction_, fraction);
  if (fraction >= 1.0) shown_step_ = 0;  // the next registration (a batch's next image) starts again
}

void HostServices::cancel_on_sigint() {
  cancels_on_sigint_ = true;
  if (termination_signals_taken()) {
    on_interrupt([this] {
      if (cancel_requested()) {  // the second: the process ends at once
        std::fputs("\nregpipe: interrupted again; ending now\n", stderr);
        return false;
      }
      std::fputs("\nregpipe: interrupted: stopping (Ctrl-C again ends it at once)\n", stderr);
      request_cancel();
      return true;
    });
    return;
  }
  g_sigint_target.store(this);
  std::signal(SIGINT, on_sigint);
}

HostServices::~HostServices() {
  if (!cancels_on_sigint_) return;
  if (termination_signals_taken()) on_interrupt({});
  HostServices* self = this;
  g_sigint_target.compare_exchange_strong(self, nullptr);
}

}  // namespace regpipe
