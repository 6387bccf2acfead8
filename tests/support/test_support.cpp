#include "support/test_support.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace regpipe::test {

fs::path shared_data_dir() {
  if (const char* env = std::getenv("REGPIPE_TEST_DATA"); env != nullptr && *env != '\0')
    return env;
  return REGPIPE_SHARED_DATA_DIR;
}

fs::path shared_data(const std::string& file) {
  fs::path p = shared_data_dir() / file;
  std::error_code ec;
  return fs::is_regular_file(p, ec) ? p : fs::path();
}

fs::path source_dir() { return REGPIPE_SOURCE_DIR; }

fs::path bin_dir() { return fs::read_symlink("/proc/self/exe").parent_path(); }
fs::path plugin_dir() { return (bin_dir() / ".." / "plugins").lexically_normal(); }
fs::path regpipe_cli() { return bin_dir() / "regpipe"; }

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() / ("regpipe-test-" + std::to_string(rd()));
    if (fs::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary folder");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

int run_command(const std::string& command, std::string* output) {
  std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buf{};
  std::string out;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  int status = pclose(pipe);
  if (output != nullptr) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace regpipe::test
