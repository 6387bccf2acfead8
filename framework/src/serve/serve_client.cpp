// A regpipe command handed to `regpipe serve` (REGPIPE_SERVER): the client side.
#include <regpipe/host/serve.hpp>
#include <regpipe/host/termination.hpp>

#include "process/worker_process.hpp"
#include "serve/command_request.hpp"
#include "serve/local_socket.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <signal.h>
#include <unistd.h>

namespace regpipe {

std::filesystem::path default_server_socket() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && *runtime != '\0') return std::filesystem::path(runtime) / "regpipe" / "serve.sock";
  return std::filesystem::path("/tmp") / ("regpipe-" + std::to_string(::geteuid())) / "serve.sock";
}

std::optional<int> run_through_server(int argc, const char* const* argv) {
  const char* server = std::getenv(kServerVariable);
  if (server == nullptr || *server == '\0') return std::nullopt;
  if (argc >= 2 && std::strcmp(argv[1], "serve") == 0) return std::nullopt;
  const auto here = [&](const std::string& why) -> std::optional<int> {
    std::fprintf(stderr, "regpipe: warning: %s=%s: %s; running in this process\n", kServerVariable, server, why.c_str());
    return std::nullopt;
  };
  const std::optional<serve_socket::CommandRequest> request = serve_socket::request_of_this_process(argc, argv);
  if (!request) return here("this process's working folder cannot be named");
  const int connection = serve_socket::connect_to(server);
  if (connection < 0) return here(std::string("no server there (") + std::strerror(errno) + ")");
  const auto close_and = [&](std::optional<int> status) {
    ::close(connection);
    return status;
  };
  if (!serve_socket::send_message(connection, serve_socket::to_text(*request),
                                  {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}))
    return close_and(here("the server closed the connection"));
  const std::optional<std::string> answer = serve_socket::receive_message(connection);
  if (!answer) return close_and(here("the server closed the connection"));
  if (answer->rfind("declined ", 0) == 0) return close_and(here("the server declined: " + answer->substr(9)));
  if (answer->rfind("accepted ", 0) != 0) return close_and(here("the server answered '" + *answer + "'"));
  // From here the command runs there, on this process's streams: Ctrl-C and termination
  // signals are passed on to it (it is in a process group of its own).
  const pid_t runner = pid_t(std::atol(answer->c_str() + 9));
  on_interrupt([runner] { return ::kill(runner, SIGINT) == 0; });
  on_termination([runner](int signal) { ::kill(runner, signal); });
  const std::optional<std::string> ended = serve_socket::receive_message(connection);
  ::close(connection);
  if (ended && ended->rfind("status ", 0) == 0) return std::atoi(ended->c_str() + 7);
  if (ended && ended->rfind("signal ", 0) == 0) {  // the server tells a signal that ended it
    const int signal = std::atoi(ended->c_str() + 7);
    std::fprintf(stderr, "regpipe: error: the server's process %d, which ran this command, ended with %s\n",
                 int(runner), signal_name(signal).c_str());
    return 128 + signal;
  }
  // Nobody told how it ended: a server that is there always tells (its process's status, or
  // the signal that ended it), so the server is gone, and its processes with it.
  std::fprintf(stderr,
               "regpipe: error: the server at %s went away while its process %d ran this command (the "
               "server's processes end with it); its outputs are incomplete: start the server again, or run "
               "the command without %s\n",
               server, int(runner), kServerVariable);
  return 1;
}

}  // namespace regpipe
