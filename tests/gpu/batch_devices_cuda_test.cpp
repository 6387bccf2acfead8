// A batch over GPU workers (execution.devices, issue 18): two workers on one device give one
// worker's transforms bit for bit, each reports the card it ran on; with several devices,
// `all` puts one worker on each; several registrations at once in one worker sharing its CUDA
// context (execution.registrations_per_worker, issue 17) give one at a time's transforms and
// registered images bit for bit, and so does a worker taken from `regpipe serve`. Skipped
// without a CUDA device.
#include <regpipe/host/atomic_file.hpp>

#include "support/phantom_batch.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cuda_runtime.h>

#include <fstream>
#include <iterator>
#include <set>
#include <thread>

namespace fs = std::filesystem;

namespace {

constexpr regpipe::test::PhantomCase kCases[] = {
    {"scan_a", "6", "4"}, {"scan_b", "-10", "7"}, {"scan_c", "12", "-5"}, {"scan_d", "3", "-2"}};

class BatchDevicesCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    const cudaError_t e = cudaGetDeviceCount(&devices_);
    if (e != cudaSuccess || devices_ == 0)
      GTEST_SKIP() << "no CUDA device: " << (e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    ASSERT_TRUE(regpipe::test::make_phantom_batch(dir_.path(), kCases, "--size 64 --voxel-mm 2"));
    regpipe::write_text_atomically(dir_ / "pipeline.yaml", R"(inputs:
  reference: reference.nii.gz
  moving: scans/*.nii.gz
registration:
  levels_mm: [8, 4, 2]
  cost: {plugin: cuda.cr, params: {bins: 64}}
  optimizer: {plugin: optim.flirt}
  resampler: {plugin: resample.cuda}
outputs:
  dir: result
)");
  }
  // `at_once`: execution.registrations_per_worker; `client`: what comes before regpipe.
  nlohmann::json run_batch(const std::string& out, const std::string& devices, const std::string& at_once = "auto",
                           const std::string& client = "") const {
    std::string text;
    const int status = regpipe::test::run_command(client + regpipe::test::regpipe_cli().string() + " run '" +
                                                      (dir_ / "pipeline.yaml").string() + "' --set outputs.dir=" +
                                                      (dir_ / out).string() + " --devices " + devices +
                                                      " --set execution.registrations_per_worker=" + at_once,
                                                  &text);
    EXPECT_EQ(status, 0) << text;
    return nlohmann::json::parse(std::ifstream(dir_ / out / "batch_report.json"));
  }
  std::string file_text(const std::string& out, const char* name, const char* file = "transform.mat") const {
    std::ifstream in(dir_ / out / name / file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Every image registered, its transform (and `also`) the batch "one"'s to the bit: one
  // worker, one image at a time.
  void expect_same_transforms_as_one_worker(const std::string& out, const char* also = nullptr) const {
    for (const auto& c : kCases)
      for (const char* file : {"transform.mat", also}) {
        if (file == nullptr) continue;
        ASSERT_FALSE(file_text("one", c.name, file).empty()) << c.name << "/" << file;
        EXPECT_EQ(file_text(out, c.name, file), file_text("one", c.name, file)) << out << ": " << c.name << "/" << file;
      }
  }
  int devices_ = 0;
  regpipe::test::TempDir dir_;
};

}  // namespace

TEST_F(BatchDevicesCuda, TwoWorkersOnOneDeviceGiveOneWorkersTransforms) {
  run_batch("one", "0", "1");
  const nlohmann::json report = run_batch("two", "0,0");
  expect_same_transforms_as_one_worker("two");
  EXPECT_EQ(report["summary"]["failures"], 0);
  ASSERT_EQ(report["workers"].size(), 2u);
  size_t registered = 0;
  for (const nlohmann::json& w : report["workers"]) {
    registered += w["registered"].get<size_t>();
    EXPECT_EQ(w["device_index"], 0) << w.dump();
    if (w["registered"] > 0) EXPECT_TRUE(w["device"]["name"].is_string()) << "its card unnamed: " << w.dump();
  }
  EXPECT_EQ(registered, std::size(kCases));
}

TEST_F(BatchDevicesCuda, AllDevicesPutsOneWorkerOnEach) {
  if (devices_ < 2) GTEST_SKIP() << "one CUDA device: `all` is one worker (the two-workers test covers it)";
  run_batch("one", "0", "1");
  const nlohmann::json report = run_batch("all", "all");
  expect_same_transforms_as_one_worker("all");
  ASSERT_EQ(report["workers"].size(), size_t(devices_));
  std::set<int> seen;
  for (const nlohmann::json& w : report["workers"]) seen.insert(w["device_index"].get<int>());
  EXPECT_EQ(seen.size(), size_t(devices_)) << report["workers"].dump();
}

TEST_F(BatchDevicesCuda, SeveralRegistrationsInOneWorkerGiveOneAtATimesResults) {
  run_batch("one", "0", "1");
  const nlohmann::json report = run_batch("three", "0", "3");
  expect_same_transforms_as_one_worker("three", "registered.nii.gz");
  EXPECT_EQ(report["summary"]["failures"], 0);
  ASSERT_EQ(report["workers"].size(), 1u);
  EXPECT_EQ(report["workers"][0]["registrations_at_once"], 3);
  EXPECT_EQ(report["workers"][0]["registered"], std::size(kCases));
  // `auto` on a GPU registers several at once.
  const nlohmann::json automatic = run_batch("auto", "0");
  expect_same_transforms_as_one_worker("auto");
  EXPECT_GT(automatic["workers"][0]["registrations_at_once"].get<int>(), 1);
  // A batch resamples its registered images behind its registrations, with a resampler of its
  // own: a single run's files, bit for bit.
  std::string text;
  ASSERT_EQ(regpipe::test::run_command(regpipe::test::regpipe_cli().string() + " run '" + (dir_ / "pipeline.yaml").string() +
                                           "' --set inputs.moving=" + (dir_ / "scans" / "scan_b.nii.gz").string() +
                                           " --set outputs.dir=" + (dir_ / "single").string(),
                                       &text),
            0)
      << text;
  for (const char* file : {"transform.mat", "registered.nii.gz"})
    EXPECT_EQ(file_text("three", "scan_b", file), file_text("", "single", file)) << file;
}

// Through `regpipe serve` the worker is one of the server's processes, whose CUDA started with
// every device visible (a worker started here sees only its own): the same transforms and
// registered images bit for bit.
TEST_F(BatchDevicesCuda, AServedWorkerGivesAWorkerStartedHeresResults) {
  run_batch("one", "0", "1");
  const fs::path socket = dir_ / "serve.sock";
  regpipe::test::BackgroundCommand server(regpipe::test::regpipe_cli().string() + " serve --ready 2 --socket '" +
                                              socket.string() + "'",
                                          dir_ / "serve.log");
  for (int i = 0; i < 400 && !fs::exists(socket); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(socket));
  const nlohmann::json report = run_batch("served", "0", "1", "env REGPIPE_SERVER='" + socket.string() + "' ");
  EXPECT_EQ(report["workers"][0]["served_processes"], 1);
  expect_same_transforms_as_one_worker("served", "registered.nii.gz");
}
