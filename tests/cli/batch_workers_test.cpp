// A batch over several worker processes (execution.workers, execution.devices; issue 18) and
// several registrations in one (execution.registrations_per_worker; issue 17): the same
// results as one worker, each image handed out once, a dying worker's images taken by the
// others, and devices that are not there refused before any image is read.
#include <regpipe/host/atomic_file.hpp>

#include "support/phantom_batch.hpp"
#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <set>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

constexpr regpipe::test::PhantomCase kCases[] = {
    {"scan_a", "6", "4"}, {"scan_b", "-10", "7"}, {"scan_c", "12", "-5"}, {"scan_d", "3", "-2"}, {"scan_e", "-7", "3"}};

class BatchWorkersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(regpipe::test::make_phantom_batch(dir_.path(), kCases, "--size 40 --voxel-mm 4"));
    regpipe::write_text_atomically(dir_ / "pipeline.yaml", regpipe::test::kCpuPhantomBatchPipeline);
  }
  // `regpipe run pipeline.yaml <args>` into outputs.dir `out`.
  std::string run(const std::string& out, const std::string& args, int* status) const {
    std::string text;
    *status = run_command(regpipe::test::regpipe_cli().string() + " run '" + (dir_ / "pipeline.yaml").string() +
                              "' --set outputs.dir=" + (dir_ / out).string() + " " + args,
                          &text);
    return text;
  }
  nlohmann::json batch_report(const std::string& out) const {
    return nlohmann::json::parse(std::ifstream(dir_ / out / "batch_report.json"));
  }
  std::string file_text(const fs::path& path) const {
    std::ifstream in(dir_.path() / path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  regpipe::test::TempDir dir_;
};

}  // namespace

TEST_F(BatchWorkersTest, TwoWorkersGiveOneWorkersResults) {
  int status = -1;
  std::string out = run("one", "--workers 1", &status);
  ASSERT_EQ(status, 0) << out;
  out = run("two", "--workers 2", &status);
  ASSERT_EQ(status, 0) << out;
  for (const auto& c : kCases)
    for (const char* file : {"transform.mat", "transform_world.txt"}) {
      const fs::path one = fs::path("one") / c.name / file, two = fs::path("two") / c.name / file;
      ASSERT_FALSE(file_text(one).empty()) << one;
      EXPECT_EQ(file_text(one), file_text(two)) << c.name << "/" << file;
    }
  const nlohmann::json report = batch_report("two");
  EXPECT_EQ(report["summary"]["workers"], 2);
  EXPECT_EQ(report["summary"]["worker_processes"], 2);
  ASSERT_EQ(report["workers"].size(), 2u);
  size_t registered = 0;
  std::set<int> cores;
  for (const nlohmann::json& w : report["workers"]) {
    registered += w["registered"].get<size_t>();
    EXPECT_TRUE(w["device_index"].is_null()) << w.dump();  // no execution.devices: no device of its own
    ASSERT_FALSE(w["cores"].empty()) << w.dump();
    for (const int c : w["cores"]) EXPECT_TRUE(cores.insert(c).second) << "core " << c << " given twice";
  }
  EXPECT_EQ(registered, std::size(kCases));  // each image registered once, by one of them
  for (const nlohmann::json& image : report["images"]) {
    EXPECT_EQ(image["status"], "ok") << image.dump();
    EXPECT_TRUE(image["worker"] == 0 || image["worker"] == 1) << image.dump();
  }
}

// Three images registered at once in one worker: one at a time's transforms and registered
// images to the bit, each image once.
TEST_F(BatchWorkersTest, SeveralRegistrationsPerWorkerGiveOneAtATimesResults) {
  int status = -1;
  const std::string images = " --set outputs.registered_image=true";
  std::string out = run("one", "--set execution.registrations_per_worker=1" + images, &status);
  ASSERT_EQ(status, 0) << out;
  out = run("three", "--set execution.registrations_per_worker=3" + images, &status);
  ASSERT_EQ(status, 0) << out;
  for (const auto& c : kCases)
    for (const char* file : {"transform.mat", "transform_world.txt", "registered.nii.gz"}) {
      const fs::path one = fs::path("one") / c.name / file, three = fs::path("three") / c.name / file;
      ASSERT_FALSE(file_text(one).empty()) << one;
      EXPECT_EQ(file_text(one), file_text(three)) << c.name << "/" << file;
    }
  const nlohmann::json report = batch_report("three");
  ASSERT_EQ(report["workers"].size(), 1u);
  EXPECT_EQ(report["workers"][0]["registrations_at_once"], 3);
  EXPECT_EQ(report["workers"][0]["registered"], std::size(kCases));
  EXPECT_EQ(batch_report("one")["workers"][0]["registrations_at_once"], 1);
  for (const nlohmann::json& image : report["images"]) EXPECT_EQ(image["status"], "ok") << image.dump();
}

// A device index that this machine does not have: refused before the batch starts, naming it.
TEST_F(BatchWorkersTest, ADeviceThatIsNotThereIsRefusedBeforeAnyImage) {
  int status = -1;
  const std::string out = run("missing", "--devices 63", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("execution.devices lists device 63, but this "), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir_ / "missing")) << "an output folder for a batch that never started";
}

// `all` runs everywhere: one worker per GPU, or (no GPU) the CPU components, saying so.
TEST_F(BatchWorkersTest, AllDevicesRunsWithOrWithoutAGpu) {
  int status = -1;
  const std::string out = run("all", "--devices all", &status);
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json report = batch_report("all");
  EXPECT_EQ(report["summary"]["failures"], 0);
  if (report["workers"][0]["device_index"].is_null())
    EXPECT_NE(out.find("execution.devices: all, but this machine has"), std::string::npos) << out;
}

TEST_F(BatchWorkersTest, BadExecutionKeysAreRefusedWithTheirReasons) {
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"--set 'execution.devices=[0, x]'", "execution.devices"},
      {"--set execution.devices=some", "execution.devices must be `all` or a list of 1 to 256 device indices"},
      {"--set 'execution.devices=[64]'", "execution.devices: device 64 is outside [0, 63]"},
      {"--set execution.workers=0", "execution.workers=0 is outside [1, 256]"},
      {"--set execution.registrations_per_worker=0",
       "execution.registrations_per_worker=0 is outside [1, 16] (or `auto`)"},
      {"--devices 0 --set registration.resampler.plugin=resample.cuda "
       "--set registration.resampler.params.device=0",
       "execution.devices and registration.resampler.params.device are both set"},
  };
  for (const auto& c : cases) {
    int status = -1;
    const std::string out = run("bad", c.args, &status);
    EXPECT_EQ(status, 2) << c.args << "\n" << out;
    EXPECT_NE(out.find(c.message), std::string::npos) << c.args << "\n" << out;
  }
}
