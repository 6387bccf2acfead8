// A batch rerun registers only the images whose complete results are missing (issue 20,
// item 4): complete is checked (report.json of this pipeline and these files, every output
// present and non-empty), not assumed.
#include "fault_batch.hpp"

#include <csignal>

namespace fs = std::filesystem;
using regpipe::test::FaultBatch;
using regpipe::test::quoted;

namespace {

class BatchResume : public FaultBatch {
 protected:
  // No image is hit: the cost is the translation's norm, every image registers in a moment.
  std::string plain_pipeline() const {
    return quoted(pipeline("{plugin: test.fault.segv, params: {only_below_extent_mm: 1}}"));
  }

  std::vector<std::string> statuses() const {
    std::vector<std::string> out;
    const nlohmann::json report = batch_report();
    for (const auto& image : report["images"]) out.push_back(image["status"]);
    return out;
  }
};

}  // namespace

TEST_F(BatchResume, ARerunRegistersOnlyTheMissingOrBrokenResults) {
  int status = -1;
  std::string out = run("run " + plain_pipeline(), &status);
  ASSERT_EQ(status, 0) << out;
  for (const auto& s : statuses()) ASSERT_EQ(s, "ok") << out;

  fs::remove_all(result(1));                                            // a folder gone
  fs::remove_all(result(7));
  std::ofstream(result(3) / "report.json") << "{\"regpipe_version\": ";  // a torn report
  std::ofstream(result(5) / "transform.tfm", std::ios::trunc);           // an empty output
  fs::remove(result(6) / "transform_world.txt");                        // a missing output
  out = run("run " + plain_pipeline(), &status);
  ASSERT_EQ(status, 0) << out;
  const std::vector<std::string> expected = {"skipped_complete", "ok", "skipped_complete", "ok", "skipped_complete",
                                             "ok", "ok", "ok", "skipped_complete", "skipped_complete"};
  EXPECT_EQ(statuses(), expected) << out;
  const nlohmann::json report = batch_report();
  const nlohmann::json& summary = report["summary"];
  EXPECT_EQ(summary["images"], 10);
  EXPECT_EQ(summary["skipped_complete"], 5);
  EXPECT_EQ(summary["failures"], 0);
  EXPECT_NE(out.find("[1/10] " + scan(0).string() + ": skipped, complete results in "), std::string::npos) << out;
  EXPECT_NE(out.find("10 images, 0 failed, 5 skipped as complete"), std::string::npos) << out;
  const nlohmann::json& skipped = report["images"][0];
  EXPECT_TRUE(skipped["final_cost"].is_number()) << skipped.dump();  // from its report.json
  EXPECT_EQ(fs::path(skipped["outputs"].get<std::string>()), result(0));
  for (int i = 0; i < kImages; ++i) {
    EXPECT_GT(fs::file_size(result(i) / "transform.tfm"), 0u) << i;
    EXPECT_TRUE(fs::is_regular_file(result(i) / "transform_world.txt")) << i;
  }
}

TEST_F(BatchResume, AnotherPipelineOrAChangedImageOrResumeOffRegistersAgain) {
  int status = -1;
  std::string out = run("run " + plain_pipeline(), &status);
  ASSERT_EQ(status, 0) << out;
  // Another level schedule: every result is another pipeline's.
  out = run("run " + plain_pipeline() + " --set registration.levels_mm=[8,4]", &status);
  ASSERT_EQ(status, 0) << out;
  for (const auto& s : statuses()) EXPECT_EQ(s, "ok") << out;
  // A moving image replaced since (another file under the same name): that image only.
  fs::remove(scan(2));
  fs::copy_file(dir_ / "narrow" / "moving.nii.gz", scan(2));
  out = run("run " + plain_pipeline() + " --set registration.levels_mm=[8,4]", &status);
  ASSERT_EQ(status, 0) << out;
  for (int i = 0; i < kImages; ++i) EXPECT_EQ(statuses()[i], i == 2 ? "ok" : "skipped_complete") << i;
  // outputs.resume: false registers every one.
  out = run("run " + plain_pipeline() + " --set registration.levels_mm=[8,4] --set outputs.resume=false", &status);
  ASSERT_EQ(status, 0) << out;
  for (const auto& s : statuses()) EXPECT_EQ(s, "ok") << out;
  EXPECT_EQ(batch_report()["summary"]["skipped_complete"], 0);
}

// A batch killed outright (SIGKILL: no cleanup) while its worker hangs on scan_04; the rerun,
// with scan_04 replaced by a good image, registers scan_04 to scan_09 only.
TEST_F(BatchResume, AKilledBatchRerunCompletesOnlyTheMissingImages) {
  const fs::path yaml = pipeline(fault_cost("test.fault.hang"));
  const fs::path log = dir_ / "killed.log";
  const pid_t pid = start({"run", yaml.string()}, log);
  ASSERT_GT(pid, 0);
  // scan_04 hanging (for the default 300 s), the images before it written (the batch's line
  // for scan_03 comes once all its files are; its report.json alone may come before the
  // registered image, which a writer thread may still be compressing): kill the batch.
  const bool reached = wait_until_hanging(log) && wait_until_logged(log, "scan_03.nii.gz: ok");
  ::kill(pid, SIGKILL);
  wait_for(pid);
  ASSERT_TRUE(reached) << "the batch never got to scan_04:\n" << text_of(log);
  EXPECT_FALSE(fs::exists(result() / "batch_report.json"));

  fs::remove(scan(kMarked));
  fs::copy_file(dir_ / "wide" / "moving.nii.gz", scan(kMarked));
  int status = -1;
  const std::string out = run("run " + quoted(yaml), &status);
  ASSERT_EQ(status, 0) << out;
  for (int i = 0; i < kImages; ++i)
    EXPECT_EQ(statuses()[i], i < kMarked ? "skipped_complete" : "ok") << i << "\n" << out;
}
