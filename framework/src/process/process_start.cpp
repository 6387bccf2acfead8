#include "process/process_start.hpp"

#include <fstream>
#include <sstream>
#include <string>

#include <time.h>
#include <unistd.h>

namespace regpipe {

std::optional<std::chrono::steady_clock::time_point> process_start_time() {
  std::ifstream in("/proc/self/stat");
  std::string text;
  std::getline(in, text);
  // The fields after the command's name, which may hold spaces and parentheses: the start
  // time is the 22nd field, the 20th after the name's closing parenthesis.
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  for (int k = 0; k < 19 && fields >> field; ++k) {  // state .. the 21st field
  }
  unsigned long long ticks = 0;
  if (!(fields >> ticks)) return std::nullopt;
  timespec since_boot{};
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (hz <= 0 || ::clock_gettime(CLOCK_BOOTTIME, &since_boot) != 0) return std::nullopt;
  const double age = double(since_boot.tv_sec) + 1e-9 * double(since_boot.tv_nsec) - double(ticks) / double(hz);
  return std::chrono::steady_clock::now() -
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(age));
}

}  // namespace regpipe
