// A registration's outputs appear together or not at all: a run ended by SIGTERM or SIGHUP
// at any moment, or failing to write (a file size limit standing in for a full disk), leaves
// either every file of its result set or none, never a temporary, and keeps an earlier run's
// complete results.
#include <regpipe/host/atomic_file.hpp>

#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;
using regpipe::test::BackgroundCommand;
using regpipe::test::run_command;

namespace {

const std::vector<std::string> kResultSet = {"transform.mat",       "transform.tfm",     "0GenericAffine.mat",
                                             "moving_to_reference_world.txt", "transform_world.txt",
                                             "registered.nii.gz",   "report.json"};

class OutputAtomicity : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string out;
    ASSERT_EQ(run_command(cli() + " phantom '" + (dir_ / "demo").string() + "' --size 64 --voxel-mm 3", &out), 0) << out;
  }
  static std::string cli() { return "'" + regpipe::test::regpipe_cli().string() + "'"; }
  std::string run_into(const fs::path& out) const {
    return cli() + " run '" + (dir_ / "demo" / "pipeline.yaml").string() +
           "' --quiet --set registration.cost.plugin=cpu.cr --set registration.resampler.plugin=resample.cpu"
           " --set 'registration.levels_mm=[8]' --set outputs.dir='" + out.string() + "'";
  }
  // Names under `dir` that a writer leaves only while writing.
  static std::vector<std::string> temporaries(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.find(".partial-") != std::string::npos || name.find(".regpipe-staging") != std::string::npos)
        out.push_back(e.path().string());
    }
    return out;
  }
  // Which of the result set's files `dir` holds.
  static size_t files_present(const fs::path& dir) {
    size_t n = 0;
    for (const auto& f : kResultSet) n += fs::is_regular_file(dir / f);
    return n;
  }
  static std::string bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  regpipe::test::TempDir dir_;
};

}  // namespace

TEST_F(OutputAtomicity, ARunEndedBySigtermOrSighupAtAnyMomentLeavesAllItsFilesOrNone) {
  // How long a whole run takes here, to spread the signals over it.
  const auto start = std::chrono::steady_clock::now();
  std::string out;
  ASSERT_EQ(run_command(run_into(dir_ / "timing"), &out), 0) << out;
  const double run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  int ended_by_signal = 0;
  constexpr int kRuns = 16;
  for (int i = 0; i < kRuns; ++i) {
    const fs::path folder = dir_ / ("out_" + std::to_string(i));
    BackgroundCommand run(run_into(folder), dir_ / "log.txt");
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(run_ms * (i + 0.5) / kRuns));
    run.signal(i % 2 == 0 ? SIGTERM : SIGHUP);
    const int status = run.wait();
    ended_by_signal += status == 128 + SIGTERM || status == 128 + SIGHUP;
    EXPECT_TRUE(status == 0 || status == 128 + SIGTERM || status == 128 + SIGHUP) << i << ": " << status << bytes(dir_ / "log.txt");
    EXPECT_EQ(temporaries(dir_.path()), std::vector<std::string>{}) << i;
    if (!fs::exists(folder)) continue;  // ended before publishing: the folder it made is gone
    EXPECT_EQ(files_present(folder), kResultSet.size()) << i << " (status " << status << ")";
    EXPECT_TRUE(nlohmann::json::accept(bytes(folder / "report.json"))) << i;
  }
  EXPECT_GE(ended_by_signal, kRuns / 2) << "the signals came too late to test anything";
}

TEST_F(OutputAtomicity, AFailedWriteLeavesNothingNewAndKeepsTheEarlierResults) {
  const fs::path folder = dir_ / "result";
  std::string out;
  ASSERT_EQ(run_command(run_into(folder), &out), 0) << out;
  std::map<std::string, std::string> earlier;
  for (const auto& f : kResultSet) earlier[f] = bytes(folder / f);

  // A rerun whose files may not exceed 20 KB (ulimit -f; SIGXFSZ ignored, so the write fails
  // with EFBIG as on a full disk): the registered image cannot be written.
  const std::string limited = "/bin/sh -c \"trap '' XFSZ; ulimit -f 40; exec " + run_into(folder) + "\"";
  int status = run_command(limited + " --set outputs.qa_png=true", &out);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find((folder / "registered.nii.gz").string()), std::string::npos) << out;  // named as the user knows it
  EXPECT_EQ(temporaries(dir_.path()), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(folder / "qa.png"));  // nothing of the failed run
  for (const auto& f : kResultSet) EXPECT_EQ(bytes(folder / f), earlier[f]) << f << " changed";

  // The same into a new folder: no folder is left.
  status = run_command("/bin/sh -c \"trap '' XFSZ; ulimit -f 40; exec " + run_into(dir_ / "fresh") + "\"", &out);
  EXPECT_EQ(status, 2) << out;
  EXPECT_FALSE(fs::exists(dir_ / "fresh"));
}
