// `regpipe serve`: keeps `warm` processes waiting (serve_one_command.cpp), hands each
// connection to one of them and starts another in its place.
#include <regpipe/host/error.hpp>
#include <regpipe/host/serve.hpp>
#include <regpipe/host/termination.hpp>

#include "process/worker_process.hpp"
#include "serve/local_socket.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace regpipe {
namespace {

// Waiting processes that end before they are ready, in a row, after which the server gives up
// (a driver that cannot start, a plugin folder that crashes on loading): their messages are
// on the server's stderr.
constexpr int kMostFailedStarts = 3;

struct Member {
  std::unique_ptr<WorkerProcess> process;
  enum State { kStarting, kReady, kServing } state = kStarting;
  // While serving: the server's copy of its client's connection, on which a signal that ends
  // the process is told (it cannot send its status itself).
  int client = -1;
};

// A serving process has ended: a signal that ended it goes to its client ("signal N", which a
// batch's supervisor records for its served worker, and a client reports), then the
// connection is closed here.
void tell_the_client(Member& m, const WorkerExit& ended) {
  if (ended.signal != 0) serve_socket::send_message(m.client, "signal " + std::to_string(ended.signal));
  ::close(m.client);
  m.client = -1;
}

std::vector<std::string> member_arguments(const ServeOptions& o) {
  std::vector<std::string> args = {"serve", "--socket", o.socket.string(), "--one-command"};
  std::string devices;
  for (int d : o.devices) {
    if (!devices.empty()) devices += ',';
    devices += std::to_string(d);
  }
  args.insert(args.end(), {"--devices", devices});
  for (const std::string& p : o.plugin_paths) args.insert(args.end(), {"--plugin-path", p});
  return args;
}

// The processes serving a command, for the termination hook (the signal thread).
class Serving {
 public:
  void add(pid_t pid) {
    std::lock_guard lock(mutex_);
    pids_.insert(pid);
  }
  void remove(pid_t pid) {
    std::lock_guard lock(mutex_);
    pids_.erase(pid);
  }
  // Passes `signal` on and gives them a few seconds to clean up (when this process ends, they
  // are killed: worker_process.hpp).
  void end_all(int signal) {
    std::lock_guard lock(mutex_);
    for (pid_t pid : pids_) ::kill(pid, signal);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (pid_t pid : pids_)
      while (::waitpid(pid, nullptr, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

 private:
  std::mutex mutex_;
  std::set<pid_t> pids_;
};

}  // namespace

int serve(const ServeOptions& options) {
  const bool default_folder = options.socket == default_server_socket();
  const int listener = serve_socket::listen_at(options.socket, default_folder);
  int stop_pipe[2];
  if (::pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error(std::strerror(errno));
  // SIGINT: stop taking commands, let those in progress finish. SIGTERM, SIGHUP: pass it on to
  // them (each removes its temporary outputs and ends), and end.
  static Serving serving;
  const std::string socket_path = options.socket.string();
  on_interrupt([fd = stop_pipe[1]] {
    [[maybe_unused]] const ssize_t n = ::write(fd, "x", 1);
    return true;
  });
  on_termination([socket_path](int signal) {
    ::unlink(socket_path.c_str());
    serving.end_all(signal);
  });

  std::list<Member> members;
  int failed_starts = 0;
  const auto start_one = [&] {
    WorkerStart start;
    start.task_channel = true;
    members.push_back({std::make_unique<WorkerProcess>(member_arguments(options), start), Member::kStarting});
  };
  std::fprintf(stderr, "regpipe serve: listening at %s, %u processes kept ready; commands reach it with\n  export %s=%s\n",
               socket_path.c_str(), options.warm, kServerVariable, socket_path.c_str());
  // After SIGINT: no more commands; the loop goes on, reaping and telling their clients, until
  // the commands in progress have ended (a batch's supervisor waits to learn how its served
  // worker ended).
  bool stopping = false;
  const auto any_serving = [&] {
    return std::any_of(members.begin(), members.end(), [](const Member& m) { return m.state == Member::kServing; });
  };
  while (!stopping || any_serving()) {
    unsigned waiting = 0, ready = 0;
    for (const Member& m : members) {
      waiting += m.state != Member::kServing;
      ready += m.state == Member::kReady;
    }
    // A process starting CUDA beside a command slows it (0.09 -> 0.13 s of registration on an
    // H100: the new context's set-up shares the GPU), so while a command runs only a pool with
    // nothing left waiting starts one; the others start once the commands have ended.
    const unsigned target = stopping ? 0u : any_serving() ? std::min(options.warm, 1u) : options.warm;
    for (; waiting < target; ++waiting) start_one();

    std::vector<pollfd> watched = {{stopping ? -1 : stop_pipe[0], POLLIN, 0},
                                   {ready > 0 && !stopping ? listener : -1, POLLIN, 0}};
    std::vector<Member*> by_fd;
    for (Member& m : members)
      if (m.process->report_fd() >= 0) {
        watched.push_back({m.process->report_fd(), POLLIN, 0});
        by_fd.push_back(&m);
      }
    const bool reaping = std::any_of(members.begin(), members.end(),
                                     [](const Member& m) { return m.process->report_fd() < 0; });
    if (::poll(watched.data(), watched.size(), reaping ? 100 : -1) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (watched[0].revents != 0) {
      stopping = true;
      ::close(listener);  // a client (a batch's next worker) finds nobody and runs it itself
      ::unlink(socket_path.c_str());
      std::fprintf(stderr, "regpipe serve: stopping; waiting for the commands in progress\n");
    }

    for (size_t i = 2; i < watched.size(); ++i) {
      if (watched[i].revents == 0) continue;
      Member& m = *by_fd[i - 2];
      m.process->read_available();
      while (std::optional<std::string> line = m.process->buffered_line())
        if (*line == "ready" && m.state == Member::kStarting) {
          m.state = Member::kReady;
          failed_starts = 0;
        }
    }
    // Processes that have ended: one that served its command, or one that failed to start.
    for (auto it = members.begin(); it != members.end();) {
      const std::optional<WorkerExit> ended = it->process->report_fd() < 0 ? it->process->try_wait() : std::nullopt;
      if (!ended) {
        ++it;
        continue;
      }
      if (it->state == Member::kServing) {
        serving.remove(it->process->pid());
        tell_the_client(*it, *ended);
      } else {
        std::fprintf(stderr, "regpipe serve: a waiting process ended before it was ready (%s)\n",
                     ended->signal != 0 ? signal_name(ended->signal).c_str()
                                        : ("exit status " + std::to_string(ended->exit_status)).c_str());
        if (++failed_starts >= kMostFailedStarts) {
          ::unlink(socket_path.c_str());
          throw UserError("regpipe serve: " + std::to_string(kMostFailedStarts) +
                          " processes in a row ended before they were ready; see their messages above");
        }
      }
      it = members.erase(it);
    }

    if (watched[1].revents == 0) continue;
    const int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    const std::optional<uid_t> user = serve_socket::peer_user(client);
    Member* taker = nullptr;
    for (Member& m : members)
      if (taker == nullptr && m.state == Member::kReady) taker = &m;
    if (user == ::geteuid() && taker != nullptr &&
        serve_socket::send_message(taker->process->task_fd(), "client", {client})) {
      taker->state = Member::kServing;
      taker->client = ::fcntl(client, F_DUPFD_CLOEXEC, 0);
      serving.add(taker->process->pid());
    }
    ::close(client);  // a foreign user's connection just closes: the client runs its command itself
  }

  members.clear();  // the waiting ones are ended
  return 0;
}

}  // namespace regpipe
