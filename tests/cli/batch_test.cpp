// Batch mode of `regpipe run`: one reference, several moving images, each with a known truth.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/phantom_batch.hpp"
#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

std::string shell_quoted(const fs::path& p) { return "'" + p.string() + "'"; }

using Case = regpipe::test::PhantomCase;
// Three misalignments of the same phantom pair (phantom's reference does not depend on them).
constexpr Case kCases[] = {{"scan_a", "6", "4"}, {"scan_b", "-10", "7"}, {"scan_c", "12", "-5"}};

class BatchTest : public ::testing::Test {
 protected:
  // scans/<name>.nii.gz for each case, its truth in truths/<name>.txt, one reference, and a
  // CPU-only pipeline over the glob scans/*.nii.gz (small phantoms, levels 8 and 4 mm).
  void SetUp() override {
    ASSERT_TRUE(regpipe::test::make_phantom_batch(dir_.path(), kCases, "--size 40 --voxel-mm 4"));
    regpipe::write_text_atomically(pipeline(), regpipe::test::kCpuPhantomBatchPipeline);
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
  nlohmann::json batch_report(const fs::path& dir = {}) const {
    return nlohmann::json::parse(std::ifstream((dir.empty() ? result() : dir) / "batch_report.json"));
  }
  static std::string file_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Hidden temporaries of atomic writes (".<name>.partial-<pid>-<n>...") left anywhere under dir.
  static std::vector<fs::path> partial_files(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().filename().string().find(".partial-") != std::string::npos) out.push_back(e.path());
    return out;
  }
  regpipe::test::TempDir dir_;
};

}  // namespace

TEST_F(BatchTest, RegistersEveryMovingImageToItsTruth) {
  int status = -1;
  const std::string out = run("run " + shell_quoted(pipeline()), &status);
  ASSERT_EQ(status, 0) << out;
  for (const Case& c : kCases) {
    for (const char* f :
         {"transform.mat", "transform.tfm", "0GenericAffine.mat", "transform_world.txt", "report.json"})
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
  // outputs.parallel_io (the default): reads and writes overlap the registrations, so the
  // phases may sum to more than the wall clock; the sequential batch's test checks the sum.
  EXPECT_EQ(summary["parallel_io"], true);
  EXPECT_GE(summary["io_threads"]["readers"].get<int>(), 1);
  EXPECT_GE(summary["io_threads"]["writers"].get<int>(), 1);
  EXPECT_GE(summary["seconds_waiting_for_reading"].get<double>(), 0.0);
  EXPECT_GE(summary["seconds_waiting_for_writing"].get<double>(), 0.0);
  EXPECT_EQ(summary["seconds_resampling"].get<double>(), 0.0);  // registered_image: false
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

// outputs.parallel_io reads ahead and writes behind on worker threads; the registrations
// themselves (cpu.cr is deterministic) and every file must be those of the sequential batch.
TEST_F(BatchTest, ParallelIoGivesTheSequentialBatchsFiles) {
  const fs::path sequential = dir_ / "sequential", parallel = dir_ / "parallel";
  for (const auto& [dir, flag] : {std::pair{sequential, "false"}, std::pair{parallel, "true"}}) {
    int status = -1;
    const std::string out = run("run " + shell_quoted(pipeline()) + " --set outputs.registered_image=true" +
                                    " --set outputs.parallel_io=" + flag + " --set outputs.dir=" + shell_quoted(dir),
                                &status);
    ASSERT_EQ(status, 0) << out;
    size_t at = 0;  // one line per image, in the images' order
    for (size_t i = 0; i < 3; ++i) {
      at = out.find("[" + std::to_string(i + 1) + "/3] ", at);
      ASSERT_NE(at, std::string::npos) << "line " << i + 1 << " missing or out of order:\n" << out;
      EXPECT_NE(out.find(std::string(kCases[i].name) + ".nii.gz: ok", at), std::string::npos) << out;
    }
  }
  const auto reference = regpipe::read_image(dir_ / "reference.nii.gz");
  for (const Case& c : kCases) {
    for (const char* f : {"transform.mat", "transform.tfm", "0GenericAffine.mat", "transform_world.txt"})
      EXPECT_EQ(file_text(parallel / c.name / f), file_text(sequential / c.name / f)) << c.name << "/" << f;
    const auto a = regpipe::read_image(sequential / c.name / "registered.nii.gz");
    const auto b = regpipe::read_image(parallel / c.name / "registered.nii.gz");
    EXPECT_EQ(b.dims, reference.dims) << c.name;
    EXPECT_EQ(a.data, b.data) << c.name << ": registered images differ";
    const auto ra = nlohmann::json::parse(std::ifstream(sequential / c.name / "report.json"));
    const auto rb = nlohmann::json::parse(std::ifstream(parallel / c.name / "report.json"));
    EXPECT_EQ(ra["result"], rb["result"]) << c.name;
    EXPECT_EQ(ra["inputs"], rb["inputs"]) << c.name;
    EXPECT_EQ(ra["components"], rb["components"]) << c.name;
    ASSERT_EQ(ra["stages"].size(), rb["stages"].size()) << c.name;
    for (size_t s = 0; s < ra["stages"].size(); ++s)
      for (const char* key : {"name", "evaluations", "batches", "best_cost", "below_min_overlap"})
        EXPECT_EQ(ra["stages"][s][key], rb["stages"][s][key]) << c.name << " stage " << s << " " << key;
    for (const char* phase : {"reading", "registration", "writing", "total"})
      EXPECT_GT(rb["seconds"][phase].get<double>(), 0.0) << c.name << " " << phase;
  }
  for (const fs::path& dir : {sequential, parallel}) {
    const nlohmann::json report = batch_report(dir);  // a range over a temporary's member dangles
    for (const auto& image : report["images"]) {      // a part of the writing
      EXPECT_GT(image["seconds_resampling"].get<double>(), 0.0) << dir;
      EXPECT_LT(image["seconds_resampling"].get<double>(), image["seconds_writing"].get<double>()) << dir;
    }
  }
  const nlohmann::json a = batch_report(sequential), b = batch_report(parallel);
  EXPECT_EQ(a["summary"]["parallel_io"], false);
  EXPECT_EQ(a["summary"]["io_threads"]["readers"], 0);
  EXPECT_EQ(b["summary"]["parallel_io"], true);
  for (const char* key : {"images", "failures"}) EXPECT_EQ(a["summary"][key], b["summary"][key]) << key;
  double phase_sum = 0.0;  // in turn, the phases fit in the wall clock
  for (const char* phase : {"seconds_reading", "seconds_registration", "seconds_writing"})
    phase_sum += a["summary"][phase].get<double>();
  EXPECT_LE(phase_sum, a["summary"]["seconds_total"].get<double>());
  ASSERT_EQ(a["images"].size(), b["images"].size());
  for (size_t i = 0; i < a["images"].size(); ++i) {
    for (const char* key : {"path", "status", "error", "final_cost"})
      EXPECT_EQ(a["images"][i][key], b["images"][i][key]) << i << " " << key;
    EXPECT_EQ(fs::path(b["images"][i]["outputs"].get<std::string>()), parallel / kCases[i].name);
  }
  EXPECT_TRUE(partial_files(parallel).empty());
}

// A corrupt image between good ones, with registered images written behind: reported in its
// turn, the images after it registered, every output complete.
TEST_F(BatchTest, ACorruptImageInTheMiddleOfAParallelBatchFailsOnlyItself) {
  std::ofstream(dir_ / "scans" / "scan_bad.nii.gz") << "not an image";
  std::string truncated = file_text(dir_ / "scans" / "scan_a.nii.gz");
  std::ofstream(dir_ / "scans" / "scan_b2.nii.gz", std::ios::binary) << truncated.substr(0, truncated.size() / 2);
  int status = -1;
  const std::string out =
      run("run " + shell_quoted(pipeline()) + " --set outputs.registered_image=true", &status);
  EXPECT_EQ(status, 2) << out;
  // sorted: scan_a, scan_b, scan_b2 (truncated), scan_bad (corrupt), scan_c
  const size_t b = out.find("[2/5] "), b2 = out.find("[3/5] "), bad = out.find("[4/5] "), c = out.find("[5/5] ");
  ASSERT_TRUE(b != std::string::npos && b2 != std::string::npos && bad != std::string::npos &&
              c != std::string::npos) << out;
  EXPECT_TRUE(b < b2 && b2 < bad && bad < c) << "lines out of order:\n" << out;
  EXPECT_NE(out.find("scan_b2.nii.gz: FAILED", b2), std::string::npos) << out;
  EXPECT_NE(out.find("scan_bad.nii.gz: FAILED", bad), std::string::npos) << out;
  EXPECT_NE(out.find("scan_c.nii.gz: ok", c), std::string::npos) << out;
  const auto reference = regpipe::read_image(dir_ / "reference.nii.gz");
  for (const Case& c : kCases) {
    EXPECT_LT(error_mm(c), 0.5) << c.name;
    EXPECT_EQ(regpipe::read_image(result() / c.name / "registered.nii.gz").dims, reference.dims) << c.name;
    const auto r = nlohmann::json::parse(std::ifstream(result() / c.name / "report.json"));
    EXPECT_TRUE(r["result"]["final_cost"].is_number()) << c.name;
  }
  const nlohmann::json report = batch_report();
  EXPECT_EQ(report["summary"]["images"], 5);
  EXPECT_EQ(report["summary"]["failures"], 2);
  const char* statuses[] = {"ok", "ok", "failed", "failed", "ok"};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(report["images"][i]["status"], statuses[i]) << i;
  EXPECT_NE(report["images"][2]["error"].get<std::string>().find("scan_b2.nii.gz"), std::string::npos);
  EXPECT_FALSE(fs::exists(result() / "scan_b2"));
  EXPECT_FALSE(fs::exists(result() / "scan_bad"));
  EXPECT_TRUE(partial_files(result()).empty());
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

// A BIDS tree (sub-*/anat/*_T1w.nii.gz): every subject found across folders, the outputs
// mirroring the tree below the pattern's fixed part, the report naming each image's entities.
TEST_F(BatchTest, ABidsPatternAcrossFoldersMirrorsTheTreeAndNamesTheEntities) {
  const fs::path bids = dir_ / "bids";
  for (size_t i = 0; i < std::size(kCases); ++i) {
    const std::string sub = "sub-0" + std::to_string(i + 1);
    fs::create_directories(bids / sub / "anat");
    fs::copy_file(dir_ / "scans" / (std::string(kCases[i].name) + ".nii.gz"),
                  bids / sub / "anat" / (sub + "_acq-fast_T1w.nii.gz"));
  }
  fs::copy_file(dir_ / "scans" / "scan_a.nii.gz", bids / "sub-01" / "anat" / "sub-01_T2w.nii.gz");  // not a T1w
  fs::create_directories(bids / ".sub-09" / "anat");  // hidden: never matched
  fs::copy_file(dir_ / "scans" / "scan_a.nii.gz", bids / ".sub-09" / "anat" / "sub-09_T1w.nii.gz");

  int status = -1;
  const std::string out = run("run " + shell_quoted(pipeline()) + " --set " +
                                  shell_quoted("inputs.moving=" + (bids / "sub-*" / "anat" / "*_T1w.nii.gz").string()),
                              &status);
  ASSERT_EQ(status, 0) << out;
  const nlohmann::json report = batch_report();
  ASSERT_EQ(report["images"].size(), std::size(kCases)) << report.dump(2);
  for (size_t i = 0; i < std::size(kCases); ++i) {
    const std::string sub = "0" + std::to_string(i + 1);
    const fs::path folder = result() / ("sub-" + sub) / "anat" / ("sub-" + sub + "_acq-fast_T1w");
    const nlohmann::json& entry = report["images"][i];
    EXPECT_EQ(entry["outputs"], folder.string());
    EXPECT_EQ(entry["bids"], (nlohmann::json{{"sub", sub}, {"acq", "fast"}, {"suffix", "T1w"}}));
    // The right image in the right folder: each recovers its own case's truth.
    const auto reference = regpipe::read_image(dir_ / "reference.nii.gz");
    const auto found = regpipe::from_world_ras_forward(regpipe::read_matrix_file(folder / "transform_world.txt"));
    const auto truth = regpipe::from_world_ras_forward(
        regpipe::read_matrix_file(dir_ / "truths" / (std::string(kCases[i].name) + ".txt")));
    EXPECT_LT(regpipe::mean_displacement_mm(found, truth, reference, regpipe::foreground_threshold(reference)), 1.0);
  }
}

// Images of one name in different folders (subject/T1.nii.gz) get a folder each.
TEST_F(BatchTest, OneFileNameInSeveralFoldersGetsAFolderEach) {
  for (const char* subject : {"anna", "ben"}) {
    fs::create_directories(dir_ / "study" / subject);
    fs::copy_file(dir_ / "scans" / "scan_a.nii.gz", dir_ / "study" / subject / "T1.nii.gz");
  }
  int status = -1;
  const std::string out = run("run " + shell_quoted(pipeline()) + " --set " +
                                  shell_quoted("inputs.moving=" + (dir_ / "study" / "*" / "T1.nii.gz").string()),
                              &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_TRUE(fs::exists(result() / "anna" / "T1" / "transform.mat"));
  EXPECT_TRUE(fs::exists(result() / "ben" / "T1" / "transform.mat"));
  EXPECT_TRUE(batch_report()["images"][0]["bids"].is_null());
}
