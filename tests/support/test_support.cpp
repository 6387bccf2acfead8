#include "support/test_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/error.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <cerrno>
#include <csignal>
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

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no UserError)";
}

double max_difference(const Eigen::Matrix4d& a, const Eigen::Matrix4d& b) { return (a - b).cwiseAbs().maxCoeff(); }

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

BackgroundCommand::BackgroundCommand(const std::string& command, const fs::path& log) {
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);  // its own group: a signal to the group reaches the shell's exec'd command
    const std::string full = "exec " + command + " > '" + log.string() + "' 2>&1";
    ::execl("/bin/sh", "sh", "-c", full.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
}

BackgroundCommand::~BackgroundCommand() {
  if (pid_ > 0 && !ended_) {
    ::kill(pid_, SIGKILL);
    wait();
  }
}

void BackgroundCommand::signal(int sig) const {
  if (pid_ > 0 && !ended_) ::kill(pid_, sig);
}

int BackgroundCommand::wait() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  ended_ = true;
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

std::optional<std::string> gpu_component_unavailable(const PluginHost& host, int32_t kind, const std::string& id) {
  const Component* c = host.find(kind, id);
  if (c == nullptr) return id + " is not built (no nvcc)";
  try {
    HostServices quiet(RP_LOG_WARNING, false);
    if (kind == RP_KIND_RESAMPLER)
      ResamplerInstance probe(*c, quiet, resolve_params(*c, {}));
    else
      CostInstance probe(*c, quiet, resolve_params(*c, {}));
  } catch (const ComponentError& e) {
    if (e.status() == RP_DEVICE) return "no CUDA device: " + std::string(e.what());
    throw;
  }
  return std::nullopt;
}

PluginSearchOptions plugins_in(std::vector<std::filesystem::path> folders) {
  PluginSearchOptions o;
  o.plugin_paths = std::move(folders);
  o.use_environment = false;
  o.use_default_dirs = false;
  return o;
}

PluginSearchOptions built_plugins() { return plugins_in({plugin_dir()}); }

}  // namespace regpipe::test
