// A batch of ten phantom scans for the fault tests: nine alike (160 mm wide) and scan_04
// narrower (128 mm), which the fault plugin's costs (tests/robustness/plugins) pick out with
// only_below_extent_mm: 145. One level of 8 mm and a cost that is the translation's squared
// norm keep each registration to a fraction of a second.
#pragma once

#include <regpipe/host/atomic_file.hpp>

#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern "C" char** environ;

namespace regpipe::test {

inline std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// Where the fault plugin is built (outside the default plugin search path).
inline std::filesystem::path fault_plugin_dir() {
  return (bin_dir() / ".." / "test_plugins" / "fault").lexically_normal();
}

class FaultBatch : public ::testing::Test {
 protected:
  static constexpr int kImages = 10;
  static constexpr int kMarked = 4;  // scan_04: the image the faults hit

  void SetUp() override {
    namespace fs = std::filesystem;
    fs::create_directories(dir_ / "scans");
    for (const auto& [name, size] : {std::pair{"wide", "40"}, std::pair{"narrow", "32"}}) {
      std::string out;
      ASSERT_EQ(run_command(cli() + " phantom " + quoted(dir_ / name) + " --size " + size +
                                " --voxel-mm 4 --angle-deg 5 --shift-mm 3",
                            &out),
                0)
          << out;
    }
    fs::copy_file(dir_ / "wide" / "reference.nii.gz", dir_ / "reference.nii.gz");
    for (int i = 0; i < kImages; ++i)
      fs::copy_file(dir_ / (i == kMarked ? "narrow" : "wide") / "moving.nii.gz", scan(i));
  }

  // A pipeline over scans/*.nii.gz with `cost` (its YAML flow map) and the extra lines.
  std::filesystem::path pipeline(const std::string& cost, const std::string& extra = "") const {
    const std::filesystem::path file = dir_ / "pipeline.yaml";
    write_text_atomically(file, "inputs:\n  reference: reference.nii.gz\n  moving: scans/*.nii.gz\n"
                                "registration:\n  levels_mm: [8]\n  cost: " + cost + "\n" +
                                    "  optimizer: {plugin: optim.powell}\n  resampler: {plugin: resample.cpu}\n" +
                                    extra + "outputs:\n  dir: result\n  registered_image: false\n");
    return file;
  }
  // The cost `id` of the fault plugin, hitting scan_04 only.
  static std::string fault_cost(const std::string& id) {
    return "{plugin: " + id + ", params: {only_below_extent_mm: 145}}";
  }

  static std::string cli() { return regpipe_cli().string(); }
  // regpipe with the fault plugin on its path; stdout and stderr together.
  std::string run(const std::string& args, int* status) const {
    std::string out;
    *status = run_command(cli() + " " + args + " --plugin-path " + quoted(fault_plugin_dir()), &out);
    return out;
  }
  // regpipe started in the background with the fault plugin on its path, its stdout and
  // stderr into `log`; for tests that signal it.
  pid_t start(std::vector<std::string> args, const std::filesystem::path& log) const {
    args.insert(args.begin(), cli());
    args.insert(args.end(), {"--plugin-path", fault_plugin_dir().string()});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    pid_t pid = -1;
    const int error = posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&files);
    return error == 0 ? pid : -1;
  }
  // Its exit status, or 128 + the signal that ended it.
  static int wait_for(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // Waits (up to a minute) until `log` contains `text`.
  static bool wait_until_logged(const std::filesystem::path& log, const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (text_of(log).find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }
  // Waits (up to a minute) until `log` says that test.fault.hang hangs.
  static bool wait_until_hanging(const std::filesystem::path& log) {
    return wait_until_logged(log, "test.fault.hang: hanging in evaluate");
  }
  static std::string text_of(const std::filesystem::path& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::filesystem::path scan(int i) const {
    return dir_ / "scans" / ("scan_0" + std::to_string(i) + ".nii.gz");
  }
  std::filesystem::path result() const { return dir_ / "result"; }
  std::filesystem::path result(int i) const { return result() / ("scan_0" + std::to_string(i)); }
  nlohmann::json batch_report() const {
    return nlohmann::json::parse(std::ifstream(result() / "batch_report.json"));
  }

  TempDir dir_;
};

}  // namespace regpipe::test
