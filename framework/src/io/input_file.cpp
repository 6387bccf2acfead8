#include <regpipe/host/input_file.hpp>

#include <unistd.h>

namespace fs = std::filesystem;

namespace regpipe {

std::optional<std::string> input_file_problem(const fs::path& path, std::uintmax_t max_bytes) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // through symbolic links
  switch (status.type()) {
    case fs::file_type::not_found: return "no such file";
    case fs::file_type::directory: return "it is a folder, not a file";
    case fs::file_type::fifo: return "it is a FIFO (named pipe), not a file";
    case fs::file_type::character:
    case fs::file_type::block: return "it is a device, not a file";
    case fs::file_type::socket: return "it is a socket, not a file";
    case fs::file_type::regular: break;
    default: return "it cannot be read" + (ec ? ": " + ec.message() : std::string());
  }
  if (::access(path.c_str(), R_OK) != 0) return "it is not readable (permission denied)";
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes)
    return "it is " + std::to_string(size >> 20) + " MiB, more than the " + std::to_string(max_bytes >> 20) +
           " MiB such a file can be";
  return std::nullopt;
}

}  // namespace regpipe
