// Many runs of a valid pipeline with outputs.parallel_io (the default): the reference and the
// moving image are read by two threads at the start of each process, and in a batch further
// images are read ahead and results written behind. ITK 5.2 creates its globals lazily and
// keeps header state in statics, so unguarded, about 1.5% of runs on 2 cores crashed
// (SIGSEGV while reading, "double free or corruption" at exit) or hung after exit: the race
// is at each process's first reads, so only many processes show it. Every run here must end
// with status 0 and its complete outputs.
#include <regpipe/host/atomic_file.hpp>

#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }
std::string cli() { return quoted(regpipe::test::regpipe_cli()); }

// Each run under `timeout`: a run that hangs after its work (as one did at exit) fails too.
int run_limited(const std::string& args, std::string* out) {
  return run_command("timeout 60 " + cli() + " " + args, out);
}

class ParallelIoStress : public ::testing::Test {
 protected:
  // The phantom pair, small and with one coarse level, so that a run is mostly its start,
  // its reads and its writes.
  void SetUp() override {
    std::string out;
    ASSERT_EQ(run_command(cli() + " phantom " + quoted(dir_ / "demo") + " --size 40 --voxel-mm 4", &out), 0)
        << out;
  }
  regpipe::test::TempDir dir_;
  const std::string cheap_ = " --quiet --set registration.cost.plugin=cpu.cr --set registration.levels_mm=[8]";
};

TEST_F(ParallelIoStress, EveryRunOfAValidPipelineEndsCleanly) {
  constexpr int kRuns = 200;  // at the old 1.5% per run, 200 runs miss it 5% of the time
  int abnormal = 0;
  std::string first_failure;
  for (int i = 0; i < kRuns; ++i) {
    const fs::path out_dir = dir_ / ("run_" + std::to_string(i));
    std::string out;
    const int status = run_limited("run " + quoted(dir_ / "demo" / "pipeline.yaml") + cheap_ +
                                       " --set outputs.dir=" + quoted(out_dir),
                                   &out);
    const bool complete = fs::exists(out_dir / "transform.mat") && fs::exists(out_dir / "report.json") &&
                          fs::exists(out_dir / "registered.nii.gz");
    if (status != 0 || !complete) {
      if (abnormal++ == 0)
        first_failure = "run " + std::to_string(i) + ": status " + std::to_string(status) + "\n" + out;
    }
    fs::remove_all(out_dir);
  }
  EXPECT_EQ(abnormal, 0) << "of " << kRuns << " runs; the first:\n" << first_failure;
}

TEST_F(ParallelIoStress, EveryImageOfABatchIsRegistered) {
  constexpr int kBatches = 25, kImages = 4;
  fs::create_directories(dir_ / "scans");
  for (int i = 0; i < kImages; ++i)
    fs::copy_file(dir_ / "demo" / "moving.nii.gz", dir_ / "scans" / ("scan_" + std::to_string(i) + ".nii.gz"));
  // The phantom's pipeline without its truth, which belongs to one moving image.
  regpipe::write_text_atomically(dir_ / "batch.yaml", R"(inputs:
  reference: demo/reference.nii.gz
  moving: scans/*.nii.gz
registration:
  cost: {plugin: cpu.cr, params: {bins: 64}}
  optimizer: {plugin: optim.powell}
outputs:
  dir: batch
)");
  int abnormal = 0;
  std::string first_failure;
  for (int b = 0; b < kBatches; ++b) {
    const fs::path out_dir = dir_ / ("batch_" + std::to_string(b));
    std::string out;
    const int status = run_limited(
        "run " + quoted(dir_ / "batch.yaml") + cheap_ + " --set outputs.dir=" + quoted(out_dir), &out);
    int registered = -1;
    if (status == 0) {
      const auto report = nlohmann::json::parse(std::ifstream(out_dir / "batch_report.json"));
      registered = report["summary"]["images"].get<int>() - report["summary"]["failures"].get<int>();
    }
    if (status != 0 || registered != kImages) {
      if (abnormal++ == 0)
        first_failure = "batch " + std::to_string(b) + ": status " + std::to_string(status) + ", " +
                        std::to_string(registered) + " registered\n" + out;
    }
    fs::remove_all(out_dir);
  }
  EXPECT_EQ(abnormal, 0) << "of " << kBatches << " batches; the first:\n" << first_failure;
}

}  // namespace
