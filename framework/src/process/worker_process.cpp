#include "process/worker_process.hpp"

#include <regpipe/host/error.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace regpipe {

void worker_report(const std::string& line) {
  static std::mutex mutex;
  const std::string text = line + "\n";
  std::lock_guard lock(mutex);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(kWorkerReportFd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nobody to tell
    done += size_t(n);
  }
}

std::optional<std::string> worker_task_line() {
  std::string line;
  char c = 0;
  for (;;) {
    const ssize_t n = ::read(kWorkerTaskFd, &c, 1);  // a few bytes per image: no buffering needed
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (c == '\n') return line;
    line += c;
  }
}

void worker_reports_ended() {
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) return;
  ::dup3(null_fd, kWorkerReportFd, O_CLOEXEC);
  ::dup3(null_fd, kWorkerTaskFd, O_CLOEXEC);
  ::close(null_fd);
}

std::string signal_name(int signal) {
  const char* name = sigabbrev_np(signal);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal);
}

namespace {

// This process's environment with `changes` set: made before the fork (setenv is not
// async-signal-safe).
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& changes) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : changes) replaced = replaced || key == name;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [key, value] : changes) out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& texts) {
  std::vector<char*> out;
  for (auto& t : texts) out.push_back(t.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

WorkerProcess::WorkerProcess(const std::vector<std::string>& args, const WorkerStart& start) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  int tasks[2] = {-1, -1};
  if (start.task_channel && ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, tasks) != 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(error));
  }
  // Everything the child needs, made before the fork: between fork and exec only
  // async-signal-safe calls.
  std::vector<std::string> argv_text = {"regpipe"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv = pointers(argv_text);
  std::vector<std::string> env_text = child_environment(start.environment);
  std::vector<char*> envp = pointers(env_text);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int c : start.cpus) CPU_SET(c, &cpus);
  const int null_fd = start.quiet ? ::open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    const int error = errno;
    for (int fd : {fds[0], fds[1], tasks[0], tasks[1], null_fd})
      if (fd >= 0) ::close(fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives its parent
    if (::getppid() != parent) ::_exit(127);
    // Its own process group: a Ctrl-C at the terminal reaches the parent only, which passes it
    // on once (a worker that got it twice would end at once, see HostServices).
    ::setpgid(0, 0);
    if (!start.cpus.empty()) ::sched_setaffinity(0, sizeof(cpus), &cpus);
    // Both ends first moved above the targets, so that placing one cannot close the other;
    // dup2 clears close-on-exec.
    const int report = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
    const int task = tasks[1] >= 0 ? ::fcntl(tasks[1], F_DUPFD_CLOEXEC, 10) : -1;
    ::dup2(report, kWorkerReportFd);
    if (task >= 0) ::dup2(task, kWorkerTaskFd);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
    }
    ::execve("/proc/self/exe", argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (tasks[1] >= 0) ::close(tasks[1]);
  if (null_fd >= 0) ::close(null_fd);
  fd_ = fds[0];
  task_fd_ = tasks[0];
}

WorkerProcess::WorkerProcess(pid_t pid, int report_fd, int task_fd, std::function<WorkerExit()> how_it_ended)
    : pid_(pid), fd_(report_fd), task_fd_(task_fd), how_it_ended_(std::move(how_it_ended)) {}

WorkerProcess::~WorkerProcess() {
  if (!exit_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  if (fd_ >= 0) ::close(fd_);
  if (task_fd_ >= 0) ::close(task_fd_);
}

std::optional<std::string> WorkerProcess::next_line(std::chrono::duration<double> silence) {
  const auto deadline = std::chrono::steady_clock::now() + silence;
  for (;;) {
    if (std::optional<std::string> line = buffered_line()) return line;
    if (fd_ < 0) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill_silent();
      return std::nullopt;
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (ready > 0) read_available();
  }
}

void WorkerProcess::read_available() {
  if (fd_ < 0) return;
  char chunk[4096];
  const ssize_t n = ::read(fd_, chunk, sizeof(chunk));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {  // the child closed its end: it has ended
    ::close(fd_);
    fd_ = -1;
    return;  // a last line without '\n' (a torn crash report) is dropped
  }
  buffer_.append(chunk, size_t(n));
}

std::optional<std::string> WorkerProcess::buffered_line() {
  const size_t end = buffer_.find('\n');
  if (end == std::string::npos) return std::nullopt;
  std::string line = buffer_.substr(0, end);
  buffer_.erase(0, end + 1);
  return line;
}

void WorkerProcess::kill_silent() {
  silent_ = true;
  ::kill(pid_, SIGKILL);
}

void WorkerProcess::send_task(const std::string& line) {
  const std::string text = line + "\n";
  size_t done = 0;
  while (task_fd_ >= 0 && done < text.size()) {
    const ssize_t n = ::send(task_fd_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the child has gone
    done += size_t(n);
  }
}

WorkerExit WorkerProcess::wait() {
  if (exit_) return *exit_;
  if (how_it_ended_) {
    WorkerExit e = how_it_ended_();
    e.silent = silent_;
    exit_ = e;
    return e;
  }
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  return ended_with(status);
}

WorkerExit WorkerProcess::let_go() {
  if (!exit_) exit_ = WorkerExit{};
  how_it_ended_ = nullptr;  // a served one's connection closes
  return *exit_;
}

std::optional<WorkerExit> WorkerProcess::try_wait() {
  if (exit_) return exit_;
  if (how_it_ended_) return fd_ < 0 ? std::optional<WorkerExit>(wait()) : std::nullopt;  // ended with its pipe
  int status = 0;
  pid_t ended = 0;
  while ((ended = ::waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (ended != pid_) return std::nullopt;
  return ended_with(status);
}

WorkerExit WorkerProcess::ended_with(int status) {
  WorkerExit e;
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  else e.exit_status = WEXITSTATUS(status);
  e.silent = silent_;
  exit_ = e;
  return e;
}

std::vector<std::string> report_fields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

}  // namespace regpipe
