#include "serve/command_request.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

extern char** environ;

namespace regpipe::serve_socket {

std::string this_executable() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::canonical("/proc/self/exe", error);
  return error ? std::string() : exe.string();
}

std::optional<CommandRequest> request_of_this_process(int argc, const char* const* argv) {
  CommandRequest r;
  r.arguments.assign(argv, argv + argc);
  std::error_code error;
  r.working_folder = std::filesystem::current_path(error).string();
  if (error) return std::nullopt;
  for (char** e = environ; *e != nullptr; ++e) r.environment.emplace_back(*e);
  r.umask = ::umask(0);
  ::umask(r.umask);  // read by setting it: put it back
  r.executable = this_executable();
  r.version = REGPIPE_VERSION;
  return r;
}

// One list of the fields for both directions (mode_t is an unsigned integer).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CommandRequest, arguments, working_folder, environment, umask, executable, version)

std::string to_text(const CommandRequest& r) { return nlohmann::json(r).dump(); }

std::optional<CommandRequest> request_from_text(const std::string& text) {
  try {
    CommandRequest r = nlohmann::json::parse(text).get<CommandRequest>();
    r.umask &= 0777;
    if (r.arguments.empty()) return std::nullopt;
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace regpipe::serve_socket
