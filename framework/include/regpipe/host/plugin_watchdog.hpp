// Which plugin call is running, so that a plugin that hangs or crashes is named.
//
// Every call into a plugin goes through a WatchedCall (components.cpp). The watchdog thread
// ends the process when one call runs longer than the timeout (a plugin that ignores
// should_cancel cannot be stopped any other way: its thread cannot be unwound), and the crash
// reporter names the call that was running when SIGSEGV, SIGABRT, ... arrived. Both also write
// a "fault" line on the report pipe of a worker process (process/worker_process.hpp), which is how a
// batch's supervisor learns which image and which component took the worker down.
#pragma once

#include <regpipe/host/plugin_host.hpp>

#include <chrono>
#include <cstddef>

namespace regpipe {

// One call into a plugin, from entry to return. A call made from inside another (a cost
// evaluation the optimizer asked for) pauses the outer one's clock: an optimizer is timed
// from the last time control came back to it.
class WatchedCall {
 public:
  WatchedCall(const Component& component, const char* call);
  ~WatchedCall();
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

  // "cost 'cpu.cr' evaluate"
  const char* label() const { return label_; }
  // The batch image its thread was registering (ImageOnThisThread), -1 when none.
  long image() const { return image_; }

 private:
  friend struct WatchdogState;
  char label_[192];
  long image_ = -1;
  std::chrono::steady_clock::time_point start_;
  WatchedCall* outer_ = nullptr;
  bool paused_ = false;  // a call of its own is running inside it
};

// Marks the calling thread as registering batch image `image` (its index into inputs.moving)
// while it lives, so that a crash or a hang in a plugin call made from this thread names that
// image on the worker's "fault" line: a worker with several registrations in flight
// (execution.registrations_per_worker) loses only the image whose thread met the fault. The
// first on a thread also gives it a signal stack of its own, so that a stack overflow there is
// reported too.
class ImageOnThisThread {
 public:
  explicit ImageOnThisThread(size_t image);
  ~ImageOnThisThread();
  ImageOnThisThread(const ImageOnThisThread&) = delete;
  ImageOnThisThread& operator=(const ImageOnThisThread&) = delete;
};

// Starts the watchdog: a plugin call running longer than `timeout_s` (0: no limit) ends the
// process with exit status 3 and a message naming the call, the time and `timeout_key` (the
// setting to raise). In a `worker` process (worker_process.hpp) its supervisor also gets a
// "fault" line and, every two seconds, an "alive" line. Installs the crash reporter. Call
// once per process.
void watch_plugin_calls(double timeout_s, const char* timeout_key, bool worker = false);

}  // namespace regpipe
