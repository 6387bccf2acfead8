#include "serve/served_worker.hpp"

#include "serve/command_request.hpp"
#include "serve/local_socket.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace regpipe {
namespace {

// How long the supervisor waits for one of the server's processes to take its worker: one
// starting (a CUDA start) takes well under this.
constexpr timeval kPatience{30, 0};

// Descriptors closed when it goes out of scope, unless released.
struct Descriptors {
  std::vector<int> fds;
  ~Descriptors() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
};

// How a served worker ended, from its connection (after its report pipe closed).
WorkerExit read_end(int connection) {
  const std::optional<std::string> told = serve_socket::receive_message(connection);
  WorkerExit e;
  if (told && told->rfind("status ", 0) == 0) e.exit_status = std::atoi(told->c_str() + 7);
  else if (told && told->rfind("signal ", 0) == 0) e.signal = std::atoi(told->c_str() + 7);
  else e.unknown = true;
  return e;
}

}  // namespace

std::unique_ptr<WorkerProcess> start_served_worker(const std::filesystem::path& server,
                                                   const std::vector<std::string>& args, std::string* why) {
  std::vector<const char*> argv = {"regpipe"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  const std::optional<serve_socket::CommandRequest> request =
      serve_socket::request_of_this_process(int(argv.size()), argv.data());
  if (!request) {
    *why = "this process's working folder cannot be named";
    return nullptr;
  }
  int report[2], tasks[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  Descriptors ours{{report[0], report[1]}};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, tasks) != 0)
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
  ours.fds.insert(ours.fds.end(), {tasks[0], tasks[1]});
  const int connection = serve_socket::connect_to(server);
  if (connection < 0) {
    *why = "no server listens at " + server.string() + " (" + std::strerror(errno) + ")";
    return nullptr;
  }
  ours.fds.push_back(connection);
  ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &kPatience, sizeof(kPatience));
  std::optional<std::string> answer;
  if (serve_socket::send_message(connection, serve_socket::to_text(*request),
                                 {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, report[1], tasks[1]}))
    answer = serve_socket::receive_message(connection);
  if (!answer || answer->rfind("accepted ", 0) != 0) {
    *why = !answer ? "the server took no process for it" : "the server " + *answer;
    return nullptr;
  }
  const pid_t pid = pid_t(std::atol(answer->c_str() + 9));
  const timeval forever{0, 0};  // its end comes when it comes
  ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &forever, sizeof(forever));
  ours.fds = {report[1], tasks[1]};  // the worker holds its ends now; ours are kept below
  // The connection is closed with the last copy of the function that reads the worker's end.
  const auto held = std::make_shared<Descriptors>();  // made in place: a copy would close it twice
  held->fds = {connection};
  return std::make_unique<WorkerProcess>(pid, report[0], tasks[0], [held] { return read_end(held->fds.front()); });
}

}  // namespace regpipe
