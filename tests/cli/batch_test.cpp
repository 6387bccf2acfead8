// Batch mode of `regpipe run`: one reference, several moving images, each with a known truth.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

std::string shell_quoted(const fs::path& p) { return "'" + p.string() + "'"; }

struct Case {
  const char* name;
  const char* angle_deg;
  const char* shift_mm;
};
// Three misalignments of the same phantom pair (phantom's reference does not depend on them).
constexpr Case kCases[] = {{"scan_a", "6", "4"}, {"scan_b", "-10", "7"}, {"scan_c", "12", "-5"}};

class BatchTest : public ::testing::Test {
 protected:
  // scans/<name>.nii.gz for each case, its truth in truths/<name>.txt, one reference, and a
  // CPU-only pipeline over the glob scans/*.nii.gz (small phantoms, levels 8 and 4 mm).
  void SetUp() override {
    fs::create_directories(dir_ / "scans");
    fs::create_directories(dir_ / "truths");
    for (const Case& c : kCases) {
      const fs::path made = dir_ / "made" / c.name;
      std::string out;
      ASSERT_EQ(run_command(cli() + " phantom " + shell_quoted(made) + " --size 40 --voxel-mm 4 --angle-deg " +
                                c.angle_deg + " --shift-mm " + c.shift_mm, &out), 0) << out;
      fs::copy_file(made / "moving.nii.gz", dir_ / "scans" / (std::string(c.name) + ".nii.gz"));
      fs::copy_file(made / "truth_world.txt", dir_ / "truths" / (std::string(c.name) + ".txt"));
      if (!fs::exists(dir_ / "reference.nii.gz")) fs::copy_file(made / "reference.nii.gz", dir_ / "reference.nii.gz");
    }
    regpipe::write_text_atomically(pipeline(), R"(inputs:
  reference: reference.nii.gz
  moving: scans/*.nii.gz
registration:
  levels_mm: [8, 4]
  cost: {plugin: cpu.cr, params: {bins: 64}}
  optimizer: {plugin: optim.powell}
  resampler: {plugin: resample.cpu}
outputs:
  dir: result
  registered_image: false
)");
  }
  static std::string cli() { return regpipe::test::regpipe_cli().string(); }
  std::string run(const std::string& args, int* status) {
    std::string out;
    *status = run_command(cli() + " " + args, &out);
    return out;
  }
  fs::path pipeline() const { return dir_ / "pipeline.yaml"; }
  fs::path result() const { return dir_ / "result"; }
  // Mean displacement (mm) between a case's recovered transform and its truth.
  double error_mm(const Case& c) const {
    const auto reference = regpipe::read_image(dir_ / "reference.nii.gz");
    const auto found = regpipe::from_world_ras_forward(
        regpipe::read_matrix_file(result() / c.name / "transform_world.txt"));
    const auto truth = regpipe::from_world_ras_forward(
        regpipe::read_matrix_file(dir_ / "truths" / (std::string(c.name) + ".txt")));
    return regpipe::mean_displacement_mm(found, truth, reference, regpipe::foreground_threshold(reference));
  }
  nlohmann::json batch_report() const {
    return nlohmann::json::parse(std::ifstream(result() / "batch_report.json"));
  }
  regpipe::test::TempDir dir_;
};

}  // namespace

TEST_F(BatchTest, RegistersEveryMovingImageToItsTruth) {
  int status = -1;
  const std::string out = run("run " + shell_quoted(pipeline()) + " --quiet", &status);
  ASSERT_EQ(status, 0) << out;
  for (const Case& c : kCases) {
    for (const char* f : {"transform.mat", "transform.tfm", "transform_world.txt", "report.json"})
      EXPECT_TRUE(fs::is_regular_file(result() / c.name / f)) << c.name << "/" << f;
    const double error = error_mm(c);
    std::printf("%s (%s deg, %s mm): mean displacement error %.4f mm\n", c.name, c.angle_deg,
                c.shift_mm, error);
    EXPECT_LT(error, 0.5) << c.name;  // 4 mm voxels: a tenth of a voxel or so, as the single run
  }
  const nlohmann::json report = batch_report();
  const nlohmann::json& summary = report["summary"];
  EXPECT_EQ(summary["images"], 3);
  EXPECT_EQ(summary["failures"], 0);
  EXPECT_GT(summary["seconds_total"].get<double>(), 0.0);
  EXPECT_GT(summary["registrations_per_minute"].get<double>(), 0.0);
  EXPECT_GT(summary["seconds_reference_preparation"].get<double>(), 0.0);
  double phase_sum = 0.0;  // where the time went, summed over the images
  for (const char* phase : {"seconds_reading", "seconds_registration", "seconds_writing"}) {
    EXPECT_GT(summary[phase].get<double>(), 0.0) << phase;
    phase_sum += summary[phase].get<double>();
  }
  EXPECT_LE(phase_sum, summary["seconds_total"].get<double>());
  ASSERT_EQ(report["images"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {  // sorted by path: the cases' order
    const nlohmann::json& image = report["images"][i];
    EXPECT_EQ(fs::path(image["path"].get<std::string>()).filename(), std::string(kCases[i].name) + ".nii.gz");
    EXPECT_EQ(image["status"], "ok");
    EXPECT_TRUE(image["error"].is_null());
    EXPECT_GT(image["seconds"].get<double>(), 0.0);
    for (const char* phase : {"seconds_reading", "seconds_registration", "seconds_writing"})
      EXPECT_GT(image[phase].get<double>(), 0.0) << phase;
    EXPECT_LE(image["seconds_reading"].get<double>() + image["seconds_registration"].get<double>() +
                  image["seconds_writing"].get<double>(),
              image["seconds"].get<double>());
    EXPECT_TRUE(image["final_cost"].is_number());
    EXPECT_EQ(fs::path(image["outputs"].get<std::string>()), result() / kCases[i].name);
  }
  EXPECT_NE(out.find("[3/3]"), std::string::npos) << out;  // one line per image
  EXPECT_NE(out.find("(reading "), std::string::npos) << out;  // with its phases
  EXPECT_NE(out.find("3 images, 0 failed"), std::string::npos) << out;
}

TEST_F(BatchTest, ACorruptImageFailsOnlyItself) {
  std::ofstream(dir_ / "scans" / "scan_bad.nii.gz") << "not an image";
  int status = -1;
  const std::string out = run("run " + shell_quoted(pipeline()) + " --quiet", &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("scan_bad.nii.gz: FAILED"), std::string::npos) << out;
  for (const Case& c : kCases) EXPECT_LT(error_mm(c), 0.5) << c.name;
  const nlohmann::json report = batch_report();
  EXPECT_EQ(report["summary"]["images"], 4);
  EXPECT_EQ(report["summary"]["failures"], 1);
  const nlohmann::json& bad = report["images"][2];  // sorted: scan_b.nii.gz < scan_bad.nii.gz < scan_c
  EXPECT_EQ(fs::path(bad["path"].get<std::string>()).filename(), "scan_bad.nii.gz");
  EXPECT_EQ(bad["status"], "failed");
  EXPECT_NE(bad["error"].get<std::string>().find("scan_bad.nii.gz"), std::string::npos) << bad.dump();
  EXPECT_TRUE(bad["outputs"].is_null());
  for (const char* phase : {"seconds_reading", "seconds_registration", "seconds_writing"})
    EXPECT_TRUE(bad[phase].is_null()) << phase << ": the read failed, nothing was timed";
  EXPECT_FALSE(fs::exists(result() / "scan_bad"));
}

TEST_F(BatchTest, AGlobMatchingNothingIsRefused) {
  int status = -1;
  const std::string out =
      run("validate " + shell_quoted(pipeline()) + " --set inputs.moving=" + shell_quoted(dir_ / "scans" / "*.nrrd"), &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("*.nrrd matches no file"), std::string::npos) << out;
}

TEST_F(BatchTest, TwoImagesWithOneStemAreRefused) {
  int status = -1;
  const std::string list = "[" + (dir_ / "scans" / "scan_a.nii.gz").string() + ", " +
                           (dir_ / "made" / "scan_a" / "moving.nii.gz").string() + ", " +
                           (dir_ / "made" / "scan_b" / "moving.nii.gz").string() + "]";
  const std::string out = run("validate " + shell_quoted(pipeline()) + " --set " + shell_quoted("inputs.moving=" + list), &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("have the same name moving"), std::string::npos) << out;
}
