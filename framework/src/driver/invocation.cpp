#include <regpipe/host/invocation.hpp>

#include <ctime>
#include <unistd.h>

namespace regpipe {
namespace {
std::vector<std::string>& arguments() {
  static std::vector<std::string> args;
  return args;
}
}  // namespace

void set_command_line(int argc, const char* const* argv) { arguments().assign(argv, argv + argc); }

const std::vector<std::string>& command_line() { return arguments(); }

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace regpipe
