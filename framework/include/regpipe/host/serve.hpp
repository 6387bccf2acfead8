// `regpipe serve`: a pool of regpipe processes started ahead of time, each with its plugins
// loaded and its CUDA driver and contexts started, waiting for one command. A regpipe command
// whose environment names the server (REGPIPE_SERVER) hands its arguments, working folder,
// environment, umask and standard streams to one of them and exits with its status: the
// command runs as it would have here, in a process of its own (a crash or a hang costs that
// command only), without paying the 0.2-0.3 s that starting CUDA costs every process
// (bench/results/latency_h100.md). Each process serves one command and ends; the server
// starts another in its place.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace regpipe {

// The variable a client reads: the server's socket.
constexpr const char* kServerVariable = "REGPIPE_SERVER";

// $XDG_RUNTIME_DIR/regpipe/serve.sock, or /tmp/regpipe-<uid>/serve.sock without it.
std::filesystem::path default_server_socket();

struct ServeOptions {
  std::filesystem::path socket = default_server_socket();
  unsigned warm = 2;              // processes kept waiting
  std::vector<int> devices{0};    // CUDA devices whose contexts each starts (absent ones skipped)
  std::vector<std::string> plugin_paths;  // loaded ahead too, beside the default search path
};

// Runs the server until SIGINT (finishes the commands in progress) or SIGTERM (passes it on
// to them). Its socket's folder is made private (0700), and it serves only its own user.
// UserError where the socket cannot be made (another server listens there, a path too long).
int serve(const ServeOptions& options);

// A process of the pool (started by serve() with regpipe's hidden option): starts what
// `options` says, tells the server it is ready, takes one client, and runs its command line
// with `run_command`; returns the exit status.
int serve_one_command(const ServeOptions& options,
                      const std::function<int(const std::vector<std::string>& argv)>& run_command);

// In a process of the pool serving a command: the server's socket, where a batch's supervisor
// takes its workers from (batch_supervisor.cpp); nothing in any other process.
std::optional<std::filesystem::path> server_of_this_command();

// A client: where REGPIPE_SERVER names a server's socket, runs this command line there and
// returns its exit status; nothing where the variable is unset or empty, or the server cannot
// take it (not running: a warning, and the command runs here).
std::optional<int> run_through_server(int argc, const char* const* argv);

}  // namespace regpipe
