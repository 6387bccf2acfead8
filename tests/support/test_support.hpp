// Helpers shared by every test suite: where the data and the built binaries are, and
// temporary folders.
#pragma once

#include <regpipe/host/plugin_host.hpp>

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace regpipe::test {

// ../shared/data, or $REGPIPE_TEST_DATA when set (device bundles carry the data elsewhere).
std::filesystem::path shared_data_dir();

// Full path of a file in the shared data; empty when it is absent.
std::filesystem::path shared_data(const std::string& file);

// The project's source tree (for docs and examples that tests check).
std::filesystem::path source_dir();

// Folder of the running test executable (build/bin, or a bundle's bin/).
std::filesystem::path bin_dir();
// Where the built plugins are: bin_dir()/../plugins.
std::filesystem::path plugin_dir();
// A plugin search in exactly `folders`: neither REGPIPE_PLUGIN_PATH nor the default folders,
// so a test loads the plugins it means whatever the machine has installed.
PluginSearchOptions plugins_in(std::vector<std::filesystem::path> folders);
// plugins_in({plugin_dir()}): this build's plugins.
PluginSearchOptions built_plugins();
// The regpipe CLI next to the test executable.
std::filesystem::path regpipe_cli();

// A fresh temporary folder, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// The message of the UserError `f` throws, or "(no UserError)".
std::string message_of(const std::function<void()>& f);

// Largest absolute difference between two matrices' elements.
double max_difference(const Eigen::Matrix4d& a, const Eigen::Matrix4d& b);

// Runs a shell command, capturing stdout+stderr; returns the exit status.
int run_command(const std::string& command, std::string* output);

// A command started in the background (/bin/sh -c), its stdout and stderr into `log`, so that
// a test can signal it while it runs.
class BackgroundCommand {
 public:
  BackgroundCommand(const std::string& command, const std::filesystem::path& log);
  ~BackgroundCommand();  // kills it if still running
  BackgroundCommand(const BackgroundCommand&) = delete;
  BackgroundCommand& operator=(const BackgroundCommand&) = delete;
  void signal(int sig) const;
  // Waits for it to end: its exit status, or 128 + the signal that ended it.
  int wait();

 private:
  int pid_ = -1;
  bool ended_ = false;
};

// Why the cost or resampler `id` cannot run here: not built (no nvcc), or no CUDA device (its
// create with default parameters reports RP_DEVICE); nothing when it can. Other errors of
// create are thrown. For GPU tests to skip with the reason.
std::optional<std::string> gpu_component_unavailable(const PluginHost& host, int32_t kind, const std::string& id);

}  // namespace regpipe::test

// Skips the current test, naming the file, when a shared data file is missing. Declares
// `var` as its full path.
#define REGPIPE_REQUIRE_DATA(var, file)                                              \
  const std::filesystem::path var = ::regpipe::test::shared_data(file);              \
  if (var.empty())                                                                   \
  GTEST_SKIP() << "shared data not found: " << (::regpipe::test::shared_data_dir() / \
                                                 (file)).string()
