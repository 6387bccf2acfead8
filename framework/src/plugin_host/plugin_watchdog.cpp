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
#include <utility>
#include <vector>
#include <sys/mman.h>
#include <unistd.h>

namespace regpipe {

using Clock = std::chrono::steady_clock;

struct WatchdogState {
  std::mutex mutex;
  std::vector<WatchedCall*> calls;  // running, any thread
  // The innermost call entered last, for the crash reporter when the signal came on a thread
  // that makes no plugin call itself (a plugin's own thread); the signal handler reads it.
  std::atomic<WatchedCall*> latest{nullptr};
  // Threads inside a plugin call: with one, `latest` is its call and its image.
  std::atomic<int> calling_threads{0};
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
// Read by the signal handler on the faulting thread: initial-exec, so that reading them there
// never allocates (libregpipe is loaded with the program, never dlopen'ed).
__attribute__((tls_model("initial-exec"))) thread_local WatchedCall* t_innermost = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local long t_image = -1;  // ImageOnThisThread
__attribute__((tls_model("initial-exec"))) thread_local bool t_signal_stack = false;

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

// The decimal digits of a non-negative number, for the signal handler (no snprintf there).
struct Digits {
  char text[24] = {};
  explicit Digits(long value) {
    char reversed[24];
    size_t n = 0;
    do reversed[n++] = char('0' + value % 10);
    while ((value /= 10) > 0 && n < sizeof(reversed));
    for (size_t i = 0; i < n; ++i) text[i] = reversed[n - 1 - i];
  }
};

// The call a fatal signal hit and the image it was for: the faulting thread's own (a
// synchronous signal arrives on the thread that caused it); on a thread that makes no plugin
// call, the call entered last, and its image only while one thread is in a call (else which
// of the images in flight it served is unknown: -1).
std::pair<const WatchedCall*, long> faulting_call() {
  if (t_innermost != nullptr) return {t_innermost, t_innermost->image()};
  const WatchedCall* latest = g_state.latest.load();
  if (latest == nullptr) return {nullptr, t_image};
  return {latest, g_state.calling_threads.load() == 1 ? latest->image() : -1};
}

void on_fatal_signal(int signal) {
  const auto [call, image] = faulting_call();
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
    fault << "fault\tcrash\t" << (call != nullptr ? call->label() : "") << "\t" << message.text << "\t"
          << (image >= 0 ? Digits(image).text : "") << "\n";
    write_all(kWorkerReportFd, fault.text);
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);  // the default action: the exit status shows the signal, a core may be dumped
}

// A signal stack of its own for the calling thread (a thread that calls plugins), so that a
// stack overflow there is reported too. Mapped, never unmapped by us: a process has a few such
// threads (AddressSanitizer unmaps a thread's signal stack when the thread ends, as it does its
// own, which needs a mapping, not heap memory).
void give_thread_a_signal_stack() {
  if (t_signal_stack) return;
  t_signal_stack = true;
  constexpr size_t kBytes = 64 * 1024;
  void* memory = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;  // the default stack then: only an overflow goes unreported
  stack_t stack{};
  stack.ss_sp = memory;
  stack.ss_size = kBytes;
  sigaltstack(&stack, nullptr);
}

void install_crash_reporter() {
  give_thread_a_signal_stack();
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
  if (g_state.worker)
    worker_report("fault\ttimeout\t" + std::string(call.label()) + "\t" + message + "\t" +
                  (call.image() >= 0 ? std::to_string(call.image()) : ""));
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

WatchedCall::WatchedCall(const Component& component, const char* call) : image_(t_image), outer_(t_innermost) {
  std::snprintf(label_, sizeof(label_), "%s '%s' %s", kind_name(component.kind), component.id.c_str(), call);
  std::lock_guard lock(g_state.mutex);
  start_ = Clock::now();
  if (outer_ != nullptr) outer_->paused_ = true;
  else g_state.calling_threads.fetch_add(1);
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
  } else {
    g_state.calling_threads.fetch_sub(1);
  }
  t_innermost = outer_;
  g_state.latest.store(outer_ != nullptr ? outer_ : (g_state.calls.empty() ? nullptr : g_state.calls.back()));
}

ImageOnThisThread::ImageOnThisThread(size_t image) {
  give_thread_a_signal_stack();
  t_image = long(image);
}

ImageOnThisThread::~ImageOnThisThread() { t_image = -1; }

void watch_plugin_calls(double timeout_s, const char* timeout_key, bool worker) {
  g_state.timeout_s = timeout_s;
  g_state.timeout_key = timeout_key;
  g_state.worker = worker;
  install_crash_reporter();
  std::thread(watch).detach();
}

}  // namespace regpipe
