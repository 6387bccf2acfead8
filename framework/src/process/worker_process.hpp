// A regpipe process started again from /proc/self/exe to do a part of the work where a
// plugin's crash or hang cannot take the caller down: a batch's images (batch_supervisor.cpp),
// one component of `regpipe plugins --check` (plugin_check.cpp). A fresh process, never a
// bare fork: the caller may have threads, and a GPU plugin's CUDA does not survive a fork.
//
// The child reports to its parent on a pipe at file descriptor kWorkerReportFd, one line per
// message, tab-separated fields, each line written whole (under a lock, and below PIPE_BUF for
// the crash reporter's), so that lines from the child's threads never mix.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace regpipe {

constexpr int kWorkerReportFd = 3;

// Child side: one line to the parent (the '\n' is added); any thread.
void worker_report(const std::string& line);

// How a worker ended.
struct WorkerExit {
  int exit_status = 0;   // when it exited
  int signal = 0;        // when a signal ended it (0: it exited)
  bool silent = false;   // killed by the parent after a silence (next_line's timeout)
};

// "SIGSEGV" for SIGSEGV.
std::string signal_name(int signal);

class WorkerProcess {
 public:
  // Starts /proc/self/exe with `args` (argv[1..]). With `quiet`, the child's stdout and stderr
  // go to /dev/null; otherwise they are this process's. The child ends when this process does;
  // it runs in a process group of its own (a terminal's Ctrl-C does not reach it: pass it on).
  WorkerProcess(const std::vector<std::string>& args, bool quiet);
  ~WorkerProcess();  // kills the child if it still runs, and reaps it
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // The next line from the child (without '\n'); nullopt when the child closed the pipe (it
  // ended) or sent nothing for `silence`, in which case it is killed (SIGKILL).
  std::optional<std::string> next_line(std::chrono::duration<double> silence);
  // Waits for the child to end.
  WorkerExit wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;            // the pipe's read end
  std::string buffer_;     // read but not yet returned
  bool silent_ = false;
  std::optional<WorkerExit> exit_;
};

// Splits a report line at tabs.
std::vector<std::string> report_fields(const std::string& line);

}  // namespace regpipe
