// A regpipe process started again from /proc/self/exe to do a part of the work where a
// plugin's crash or hang cannot take the caller down: a batch's images (batch_supervisor.cpp),
// one component of `regpipe plugins --check` (plugin_check.cpp). A fresh process, never a
// bare fork: the caller may have threads, and a GPU plugin's CUDA does not survive a fork.
//
// The child reports to its parent on a pipe at file descriptor kWorkerReportFd, one line per
// message, tab-separated fields, each line written whole (under a lock, and below PIPE_BUF for
// the crash reporter's), so that lines from the child's threads never mix. A batch worker
// also gets a task channel at kWorkerTaskFd, on which the parent answers its requests for the
// next image (batch_protocol.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace regpipe {

constexpr int kWorkerReportFd = 3;
constexpr int kWorkerTaskFd = 4;

// Child side: one line to the parent (the '\n' is added); any thread.
void worker_report(const std::string& line);
// Child side: the parent's next line on the task channel (without '\n'); nullopt when the
// parent closed it. One thread at a time.
std::optional<std::string> worker_task_line();
// Child side, after its last report: the report pipe and task channel give way to /dev/null
// (the descriptors stay valid for a late "alive"), so that the parent sees the end of its
// work now rather than after the process's teardown (a CUDA process's takes 0.05-0.1 s).
void worker_reports_ended();

// How a worker ended.
struct WorkerExit {
  int exit_status = 0;   // when it exited
  int signal = 0;        // when a signal ended it (0: it exited)
  bool silent = false;   // killed by the parent after a silence
  bool unknown = false;  // a worker not this process's child whose end nobody could tell
                         // (serve/served_worker.hpp: its server went away)
};

// "SIGSEGV" for SIGSEGV.
std::string signal_name(int signal);

// How the child is started, beyond its arguments.
struct WorkerStart {
  bool quiet = false;  // its stdout and stderr to /dev/null (else this process's)
  std::vector<std::pair<std::string, std::string>> environment;  // variables set (or replaced)
  std::vector<int> cpus;  // the cores it may run on (sched_setaffinity); empty: this process's
  bool task_channel = false;  // a socket at kWorkerTaskFd for send_task()
};

class WorkerProcess {
 public:
  // Starts /proc/self/exe with `args` (argv[1..]). The child ends when this process does; it
  // runs in a process group of its own (a terminal's Ctrl-C does not reach it: pass it on).
  WorkerProcess(const std::vector<std::string>& args, const WorkerStart& start);
  // A worker started elsewhere (serve/served_worker.hpp: a process of `regpipe serve`), with the
  // parent ends of its report pipe and task channel: not this process's child, so once its
  // report pipe has closed, `how_it_ended` (which may wait) tells how it ended.
  WorkerProcess(pid_t pid, int report_fd, int task_fd, std::function<WorkerExit()> how_it_ended);
  ~WorkerProcess();  // kills the child if it still runs, and reaps it (or learns its end)
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // The next line from the child (without '\n'); nullopt when the child closed the pipe (it
  // ended) or sent nothing for `silence`, in which case it is killed (SIGKILL).
  std::optional<std::string> next_line(std::chrono::duration<double> silence);

  // For a parent that follows several children with poll(): the report pipe's read end (-1
  // once the child closed it), one read of what is there (after poll said so), and the
  // complete lines read so far, one at a time.
  int report_fd() const { return fd_; }
  void read_available();
  std::optional<std::string> buffered_line();
  // Ends a child that fell silent (SIGKILL); wait() then says so.
  void kill_silent();

  // One line on the task channel; a child that has ended is not an error (its end shows on the
  // report pipe).
  void send_task(const std::string& line);

  // The task channel's parent end (-1 without one), for a message that carries a descriptor
  // (`regpipe serve` hands a client's connection over it).
  int task_fd() const { return task_fd_; }

  // Waits for the child to end.
  WorkerExit wait();
  // A child that has reported the end of its work (worker_reports_ended) is left to end on
  // its own, taken as having exited with status 0: not waited for here (a child of this
  // process is killed when this process ends, PR_SET_PDEATHSIG; a served one ends when its
  // connection closes).
  WorkerExit let_go();
  // How it ended, if it has; nothing while it runs.
  std::optional<WorkerExit> try_wait();
  pid_t pid() const { return pid_; }

 private:
  WorkerExit ended_with(int wait_status);  // recorded in exit_

  pid_t pid_ = -1;
  int fd_ = -1;            // the report pipe's read end
  int task_fd_ = -1;       // the task channel's parent end
  std::string buffer_;     // read but not yet returned
  bool silent_ = false;
  std::optional<WorkerExit> exit_;
  std::function<WorkerExit()> how_it_ended_;  // set for a worker that is not a child
};

// Splits a report line at tabs.
std::vector<std::string> report_fields(const std::string& line);

}  // namespace regpipe
