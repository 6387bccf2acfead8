#include <regpipe/host/plugin_watchdog.hpp>
#include <regpipe/host/temporary_outputs.hpp>

#include "process/worker_process.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <unistd.h>

namespace regpipe {

using Clock = std::chrono::steady_clock;

struct WatchdogState {
  std::mutex mutex;
  std::vector<WatchedCall*> calls;  // running, any thread
  // The innermost call entered last, for the crash reporter (a signal handler reads it).
  std::atomic<WatchedCall*> latest{nullptr};
  double timeout_s = 0.0;
  const char* timeout_key = "";
  bool worker = false;  // report faults and signs of life to a supervisor (worker_process.hpp)

  // The call that has run past the timeout, if any.
  const WatchedCall* overdue(Clock::time_point now) {
    std::lock_guard lock(mutex);
    for (const WatchedCall* c : calls)
      if (!c->paused_ && std::chrono::duration<double>(now - c->start_).count() > timeout_s) return c;
    return nullptr;
  }
};

namespace {

WatchdogState g_state;
thread_local WatchedCall* t_innermost = nullptr;

// write(2) of a whole string: async-signal-safe, and a line below PIPE_BUF reaches a pipe whole.
void write_all(int fd, const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(fd, text, left);
    if (n <= 0) return;
    text += n;
    left -= size_t(n);
  }
}

// Concatenation into a fixed buffer, for the signal handler (no allocation there).
struct Line {
  char text[512] = {};
  Line& operator<<(const char* s) {
    const size_t used = std::strlen(text);
    std::strncat(text, s, sizeof(text) - used - 1);
    return *this;
  }
};

void on_fatal_signal(int signal) {
  const WatchedCall* call = g_state.latest.load();
  const char* name = sigabbrev_np(signal);
  Line message;
  message << "SIG" << (name != nullptr ? name : "?");
  if (call != nullptr)
    message << " in " << call->label() << " (a fault in that plugin)";
  else
    message << " outside any plugin call";
  Line console;
  console << "regpipe: fatal: " << message.text << "\n";
  write_all(STDERR_FILENO, console.text);
  if (g_state.worker) {  // no lock here: a short line reaches the pipe whole
    Line fault;
    fault << "fault\tcrash\t" << (call != nullptr ? call->label() : "") << "\t" << message.text << "\n";
    write_all(kWorkerReportFd, fault.text);
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);  // the default action: the exit status shows the signal, a core may be dumped
}

void install_crash_reporter() {
  // A stack of its own (for the calling thread, the one that calls the plugins), so that a
  // stack overflow is reported too.
  static char alternate_stack[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof(alternate_stack);
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  for (int signal : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) sigaction(signal, &action, nullptr);
}

[[noreturn]] void end_process_for(const WatchedCall& call) {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", g_state.timeout_s);
  const std::string message = std::string(call.label()) + " did not return within " + seconds +
                              " s (" + g_state.timeout_key + "); ending the process";
  write_all(STDERR_FILENO, ("regpipe: error: " + message + "\n").c_str());
  if (g_state.worker) worker_report("fault\ttimeout\t" + std::string(call.label()) + "\t" + message);
  remove_temporaries_for_exit();  // this thread runs ordinary code: the outputs can be undone
  ::_exit(3);  // the stuck thread cannot be unwound; exit status 3: a component failed
}

void watch() {
  auto last_sign = Clock::now();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = Clock::now();
    if (g_state.timeout_s > 0.0)
      if (const WatchedCall* call = g_state.overdue(now)) end_process_for(*call);
    // A worker's sign of life: its supervisor tells a wedged worker from a long registration.
    if (g_state.worker && now - last_sign > std::chrono::seconds(2)) {
      worker_report("alive");
      last_sign = now;
    }
  }
}

}  // namespace

WatchedCall::WatchedCall(const Component& component, const char* call) : outer_(t_innermost) {
  std::snprintf(label_, sizeof(label_), "%s '%s' %s", kind_name(component.kind), component.id.c_str(), call);
  std::lock_guard lock(g_state.mutex);
  start_ = Clock::now();
  if (outer_ != nullptr) outer_->paused_ = true;
  g_state.calls.push_back(this);
  t_innermost = this;
  g_state.latest.store(this);
}

WatchedCall::~WatchedCall() {
  std::lock_guard lock(g_state.mutex);
  std::erase(g_state.calls, this);
  if (outer_ != nullptr) {
    outer_->paused_ = false;
    outer_->start_ = Clock::now();
  }
  t_innermost = outer_;
  g_state.latest.store(outer_ != nullptr ? outer_ : (g_state.calls.empty() ? nullptr : g_state.calls.back()));
}

void watch_plugin_calls(double timeout_s, const char* timeout_key, bool worker) {
  g_state.timeout_s = timeout_s;
  g_state.timeout_key = timeout_key;
  g_state.worker = worker;
  install_crash_reporter();
  std::thread(watch).detach();
}

}  // namespace regpipe
