#include "process/worker_process.hpp"

#include <regpipe/host/error.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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

std::string signal_name(int signal) {
  const char* name = sigabbrev_np(signal);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal);
}

WorkerProcess::WorkerProcess(const std::vector<std::string>& args, bool quiet) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  // Everything the child needs, made before the fork: between fork and exec only
  // async-signal-safe calls.
  std::vector<std::string> argv_text = {"regpipe"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int null_fd = quiet ? ::open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    if (null_fd >= 0) ::close(null_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker never outlives its parent
    if (::getppid() != parent) ::_exit(127);
    // Its own process group: a Ctrl-C at the terminal reaches the parent only, which passes it
    // on once (a worker that got it twice would end at once, see HostServices).
    ::setpgid(0, 0);
    if (fds[1] == kWorkerReportFd) ::fcntl(fds[1], F_SETFD, 0);
    else ::dup2(fds[1], kWorkerReportFd);  // dup2 clears close-on-exec
    if (null_fd >= 0) {
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
    }
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  if (null_fd >= 0) ::close(null_fd);
  fd_ = fds[0];
}

WorkerProcess::~WorkerProcess() {
  if (!exit_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string> WorkerProcess::next_line(std::chrono::duration<double> silence) {
  const auto deadline = std::chrono::steady_clock::now() + silence;
  for (;;) {
    if (const size_t end = buffer_.find('\n'); end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 1);
      return line;
    }
    if (fd_ < 0) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      silent_ = true;
      ::kill(pid_, SIGKILL);
      return std::nullopt;
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // the child closed its end: it has ended
      ::close(fd_);
      fd_ = -1;
      continue;  // a last line without '\n' (a torn crash report) is dropped
    }
    buffer_.append(chunk, size_t(n));
  }
}

WorkerExit WorkerProcess::wait() {
  if (exit_) return *exit_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
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
