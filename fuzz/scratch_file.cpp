#include "scratch_file.hpp"

#include <unistd.h>
#include <zlib.h>

#include <fstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace regpipe::fuzz {

fs::path scratch_path(const std::string& file_name) {
  static const fs::path folder = [] {
    const fs::path dir = fs::temp_directory_path() / ("regpipe-fuzz-" + std::to_string(getpid()));
    fs::create_directories(dir);
    return dir;
  }();
  return folder / file_name;
}

void write_file(const fs::path& path, const uint8_t* data, size_t size, bool gzip) {
  if (gzip) {
    gzFile out = gzopen(path.c_str(), "wb1");
    if (out == nullptr || (size > 0 && gzwrite(out, data, unsigned(size)) != int(size)))
      throw std::runtime_error("fuzz harness: cannot write " + path.string());
    gzclose(out);
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  if (!out) throw std::runtime_error("fuzz harness: cannot write " + path.string());
}

}  // namespace regpipe::fuzz
