#include <regpipe/host/temporary_outputs.hpp>
#include <regpipe/host/termination.hpp>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>

namespace regpipe {
namespace {

std::atomic<bool> g_taken{false};
std::mutex g_mutex;
std::function<bool()> g_interrupt;
std::function<void(int)> g_termination_hook;

[[noreturn]] void end_by(int sig) {
  std::function<void(int)> hook;
  {
    std::lock_guard lock(g_mutex);
    hook = g_termination_hook;
  }
  if (hook) hook(sig);
  remove_temporaries_for_exit();
  std::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(sig);  // this thread: the default action ends the process, its status saying the signal
  _exit(128 + sig);
}

void take_signals(sigset_t set) {
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGINT) {
      std::function<bool()> interrupt;
      {
        std::lock_guard lock(g_mutex);
        interrupt = g_interrupt;
      }
      if (interrupt && interrupt()) continue;
    }
    end_by(sig);
  }
}

}  // namespace

void take_termination_signals() {
  if (g_taken.exchange(true)) return;
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(take_signals, set).detach();
}

bool termination_signals_taken() { return g_taken.load(); }

void on_interrupt(std::function<bool()> interrupt) {
  std::lock_guard lock(g_mutex);
  g_interrupt = std::move(interrupt);
}

void on_termination(std::function<void(int)> hook) {
  std::lock_guard lock(g_mutex);
  g_termination_hook = std::move(hook);
}

}  // namespace regpipe
