#include <regpipe/host/temporary_outputs.hpp>
#include <regpipe/host/termination.hpp>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

namespace regpipe {
namespace {

std::atomic<bool> g_taken{false};
std::mutex g_mutex;
std::function<void()> g_cancel;  // what the first SIGINT cancels
bool g_interrupted = false;

[[noreturn]] void end_by(int sig) {
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
      std::function<void()> cancel;
      {
        std::lock_guard lock(g_mutex);
        if (!g_interrupted && g_cancel) cancel = g_cancel;
        g_interrupted = true;
      }
      if (cancel) {
        std::fputs("\nregpipe: interrupted: stopping (Ctrl-C again ends it at once)\n", stderr);
        cancel();
        continue;
      }
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

void on_first_interrupt(std::function<void()> cancel) {
  std::lock_guard lock(g_mutex);
  g_cancel = std::move(cancel);
}

}  // namespace regpipe
