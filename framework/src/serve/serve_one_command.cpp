// A waiting process of `regpipe serve`: starts ahead what every command would (its plugin
// libraries loaded, the CUDA driver and the devices' primary contexts), tells the server, takes
// one client's command and runs it as that client's own process would have.
#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/plugin_host.hpp>
#include <regpipe/host/serve.hpp>

#include "process/cuda_device_count.hpp"
#include "process/worker_process.hpp"
#include "serve/command_request.hpp"
#include "serve/local_socket.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace regpipe {
namespace {

// What must be the same here and in the client for the command to mean the same: CUDA reads
// these when the driver starts, which happened here before the client came.
const char* const kFixedAtStart[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"};

std::string value_in(const std::vector<std::string>& environment, const std::string& name) {
  for (const std::string& entry : environment)
    if (entry.compare(0, name.size() + 1, name + "=") == 0) return entry.substr(name.size() + 1);
  return "";
}

// Why this process cannot run the client's command as the client would have; empty if it can.
std::string why_declined(const serve_socket::CommandRequest& request) {
  if (request.arguments.size() >= 2 && request.arguments[1] == "serve") return "a server does not start servers";
  const std::string executable = serve_socket::this_executable();
  if (request.executable != executable || request.version != REGPIPE_VERSION)
    return "the server runs " + executable + " (" + REGPIPE_VERSION + "), this command " + request.executable +
           " (" + request.version + ")";
  for (const char* name : kFixedAtStart) {
    const char* mine = std::getenv(name);
    if (value_in(request.environment, name) != (mine != nullptr ? mine : ""))
      return std::string(name) + " differs from the server's, which its CUDA started with";
  }
  return "";
}

// The client's environment in place of this one's; the server's variable dropped, so that the
// processes the command starts itself do not hand themselves to the server as commands (a
// batch's supervisor asks it for its workers through served_worker.hpp).
void take_environment(const std::vector<std::string>& environment) {
  static std::vector<std::string> kept;  // putenv keeps the pointers
  kept = environment;
  ::clearenv();
  for (std::string& entry : kept)
    if (entry.find('=') != std::string::npos) ::putenv(entry.data());
  ::unsetenv(kServerVariable);
}

// One instance of each cost and resampler, made and dropped: a CUDA plugin starts its own
// runtime on the context started ahead (each plugin links its own). A component that cannot
// start here (no device) is the command's to report, not this process's.
void start_components(const PluginHost& plugins) {
  HostServices quiet(RP_LOG_ERROR, false);
  for (const Component& c : plugins.components()) {
    try {
      if (c.kind == RP_KIND_COST) CostInstance(c, quiet, resolve_params(c, {}));
      if (c.kind == RP_KIND_RESAMPLER) ResamplerInstance(c, quiet, resolve_params(c, {}));
    } catch (const std::exception&) {
    }
  }
}

// The client's descriptors where the command expects them: the standard streams at 0-2 and a
// batch worker's report pipe and task channel at kWorkerReportFd / kWorkerTaskFd (the server's
// channels there are closed). Each is moved above them first, so that placing one cannot
// close another that arrived at its target's number.
void place_descriptors(std::vector<int>& received) {
  const int targets[] = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, kWorkerReportFd, kWorkerTaskFd};
  for (int& fd : received) {
    const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    ::close(fd);
    fd = high;
  }
  for (size_t i = 0; i < received.size(); ++i) {
    ::dup2(received[i], targets[i]);
    ::close(received[i]);
  }
}

std::optional<std::filesystem::path> g_server;  // the server this process's command came through

}  // namespace

std::optional<std::filesystem::path> server_of_this_command() { return g_server; }

int serve_one_command(const ServeOptions& options,
                      const std::function<int(const std::vector<std::string>& argv)>& run_command) {
  PluginSearchOptions search;
  for (const std::string& p : options.plugin_paths) search.plugin_paths.emplace_back(p);
  search.allow_override = true;  // loaded ahead only: the command's own host decides what it uses
  const PluginHost loaded_ahead(search);
  start_cuda_contexts(options.devices);
  start_components(loaded_ahead);
  worker_report("ready");

  std::vector<int> handed;
  if (!serve_socket::receive_message(kWorkerTaskFd, &handed) || handed.size() != 1) return 0;  // the server stopped
  const int client = handed[0];
  // The server's channels closed: it sees this process taken, and the command's own worker
  // processes find their descriptors free.
  ::close(kWorkerReportFd);
  ::close(kWorkerTaskFd);

  // A connection that never sends its request does not hold this process forever.
  const timeval patience{10, 0};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof(patience));
  std::vector<int> streams;
  const std::optional<std::string> text = serve_socket::receive_message(client, &streams);
  const std::optional<serve_socket::CommandRequest> request = text ? serve_socket::request_from_text(*text) : std::nullopt;
  // Three standard streams; a batch's worker (served_worker.hpp) adds its report pipe and task
  // channel.
  if (!request || (streams.size() != 3 && streams.size() != 5)) {
    serve_socket::send_message(client, "declined a malformed request");
    return 2;
  }
  if (const std::string why = why_declined(*request); !why.empty()) {
    serve_socket::send_message(client, "declined " + why);
    return 0;
  }
  if (!serve_socket::send_message(client, "accepted " + std::to_string(::getpid()))) return 0;
  std::fflush(nullptr);
  place_descriptors(streams);
  take_environment(request->environment);
  g_server = options.socket;
  ::umask(request->umask);
  if (::chdir(request->working_folder.c_str()) != 0) {
    std::fprintf(stderr, "regpipe: error: the server cannot enter the working folder %s: %s\n",
                 request->working_folder.c_str(), std::strerror(errno));
    serve_socket::send_message(client, "status 2");
    return 2;
  }
  // A client that goes away (killed) ends the command as SIGTERM would have ended its own
  // process: temporary outputs removed.
  static std::atomic<bool> finished{false};
  std::thread([client] {
    pollfd p{client, POLLRDHUP, 0};
    while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    if (!finished.load()) ::kill(::getpid(), SIGTERM);
  }).detach();
  const int status = run_command(request->arguments);
  finished.store(true);
  std::cout.flush();
  std::fflush(nullptr);
  serve_socket::send_message(client, "status " + std::to_string(status));
  return status;
}

}  // namespace regpipe
