// What a client of `regpipe serve` hands over with its standard streams: enough for the
// waiting process to run the command as the client's own process would have.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace regpipe::serve_socket {

struct CommandRequest {
  std::vector<std::string> arguments;    // argv, the program's name first
  std::string working_folder;
  std::vector<std::string> environment;  // "NAME=value"
  mode_t umask = 022;
  std::string executable;                // the client's regpipe (canonical), and its version:
  std::string version;                   // a server running another build declines
};

// This process's request for `argc`/`argv`; nothing where its working folder cannot be named.
std::optional<CommandRequest> request_of_this_process(int argc, const char* const* argv);
// The request's JSON, and back (nothing where it is malformed).
std::string to_text(const CommandRequest& request);
std::optional<CommandRequest> request_from_text(const std::string& text);
// This executable (canonical /proc/self/exe).
std::string this_executable();

}  // namespace regpipe::serve_socket
