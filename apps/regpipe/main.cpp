// regpipe: GPU-accelerated, plugin-based 3D image registration.
#include "commands.hpp"

#include <regpipe/host/serve.hpp>
#include <regpipe/host/termination.hpp>

int main(int argc, char** argv) {
  regpipe::take_termination_signals();  // before any thread: they all inherit the blocked signals
  // REGPIPE_SERVER: the command runs in a process `regpipe serve` started ahead.
  if (const std::optional<int> status = regpipe::run_through_server(argc, argv)) return *status;
  return regpipe::cli::run_command_line(std::vector<std::string>(argv, argv + argc));
}
