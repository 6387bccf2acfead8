// End-to-end runs of the regpipe executable: the built-in example and bad input.
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

std::string cli() { return regpipe::test::regpipe_cli().string(); }

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// Files (not folders) anywhere under `dir`.
std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

class CliTest : public ::testing::Test {
 protected:
  // A small phantom pair with a known misalignment and its pipeline (CPU cost forced so
  // the test means the same on every machine).
  void SetUp() override {
    std::string out;
    ASSERT_EQ(run_command(cli() + " phantom " + quoted(dir_ / "demo") + " --size 40 --voxel-mm 4", &out), 0) << out;
  }
  std::string run(const std::string& args, int* status) {
    std::string out;
    *status = run_command(cli() + " " + args, &out);
    return out;
  }
  fs::path pipeline() const { return dir_ / "demo" / "pipeline.yaml"; }
  // A registration option that must reach the driver: the phantom registered with `sets` and
  // cpu.cr, its transform recovered within half a millimetre (the voxels are 4 mm), and the
  // report's registration.<key> true.
  void expect_reported_and_recovered(const std::string& sets, const char* key) {
    int status = -1;
    const std::string out =
        run("run " + quoted(pipeline()) + " --quiet --set registration.cost.plugin=cpu.cr " + sets, &status);
    ASSERT_EQ(status, 0) << out;
    nlohmann::json report = nlohmann::json::parse(std::ifstream(dir_ / "demo" / "result" / "report.json"));
    EXPECT_TRUE(report["registration"][key].get<bool>()) << key;
    const double error_mm = report["evaluation"]["mean_displacement_mm"];
    std::printf("phantom, %s: mean displacement error %.4f mm\n", key, error_mm);
    EXPECT_LT(error_mm, 0.5) << key;
  }
  regpipe::test::TempDir dir_;
};

}  // namespace

TEST_F(CliTest, BuiltInExampleRecoversTheKnownTransform) {
  int status = -1;
  const std::string out =
      run("run " + quoted(pipeline()) + " --set registration.cost.plugin=cpu.cr --quiet", &status);
  ASSERT_EQ(status, 0) << out;
  const fs::path result = dir_ / "demo" / "result";
  for (const char* f : {"transform.mat", "transform.tfm", "0GenericAffine.mat", "moving_to_reference_world.txt",
                        "transform_world.txt", "registered.nii.gz", "report.json"})
    EXPECT_TRUE(fs::is_regular_file(result / f)) << f;
  // The world matrix under the name that says its direction, and under its old name until 0.2.
  EXPECT_EQ(regpipe::read_matrix_file(result / "moving_to_reference_world.txt"),
            regpipe::read_matrix_file(result / "transform_world.txt"));
  // ANTs' binary affine holds the same transform as ITK's text file.
  EXPECT_EQ(regpipe::read_itk_transform(result / "0GenericAffine.mat"),
            regpipe::read_itk_transform(result / "transform.tfm"));
  nlohmann::json report = nlohmann::json::parse(std::ifstream(result / "report.json"));
  const double error_mm = report["evaluation"]["mean_displacement_mm"];
  std::printf("phantom: mean displacement error %.4f mm\n", error_mm);
  EXPECT_LT(error_mm, 0.5);  // 4 mm voxels: a tenth of a voxel or so
  EXPECT_EQ(report["components"]["cost"]["id"], "cpu.cr");
  EXPECT_TRUE(report["components"]["cost"]["device"].is_null());  // cpu.cr runs on no GPU
  // Powell: per level a set-up stage (the images handed to the cost) and the search.
  const auto& stages = report["stages"];
  ASSERT_EQ(stages.size(), 2 * report["registration"]["levels_mm"].size());
  for (size_t i = 0; i < stages.size(); ++i) {
    const bool setup = i % 2 == 0;
    EXPECT_EQ(stages[i]["level_setup"].get<bool>(), setup) << i;
    EXPECT_EQ(stages[i]["level_mm"], report["registration"]["levels_mm"][i / 2]) << i;
    if (setup)
      EXPECT_EQ(stages[i]["evaluations"].get<long long>(), 0) << i;
    else
      EXPECT_GT(stages[i]["evaluations"].get<long long>(), 0) << i;
  }
  // The registered image is on the reference grid.
  const auto registered = regpipe::read_image(result / "registered.nii.gz");
  const auto reference = regpipe::read_image(dir_ / "demo" / "reference.nii.gz");
  EXPECT_EQ(registered.dims, reference.dims);
  EXPECT_TRUE(registered.voxel_to_world.isApprox(reference.voxel_to_world, 1e-6));
}

// FLIRT's bins per level (256 at 1 mm: 32 at 8 mm, 64 at 4 mm).
TEST_F(CliTest, BinsPerLevelRecoversTheKnownTransform) {
  expect_reported_and_recovered("--set registration.cost.params.bins=256 --set registration.bins_per_level=true",
                                "bins_per_level");
}

// Decoupled level grids. On the phantom, whose second contrast is an exact voxel-wise function
// of the first, they cost accuracy (docs/flirt-search.md: the aligned grids' false minimum at
// the truth is gone) but stay well inside a voxel.
TEST_F(CliTest, DecoupledGridsAreReportedAndStillRecoverTheKnownTransform) {
  expect_reported_and_recovered("--set registration.decouple_grids=true", "decouple_grids");
}

TEST_F(CliTest, ValidateChecksWithoutRunning) {
  int status = -1;
  std::string out = run("validate " + quoted(pipeline()), &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_TRUE(files_under(dir_ / "demo" / "result").empty());
  out = run("validate " + quoted(pipeline()) + " --set registration.dof=5", &status);
  EXPECT_EQ(status, 2);
  EXPECT_NE(out.find("--set registration.dof: registration.dof=5 is not one of 3, 6, 7, 9, 12"), std::string::npos) << out;
}

// validate looks at the files without reading a voxel, and names the components this
// machine would run (cpu.cr in CI; cuda.cr where a GPU is).
TEST_F(CliTest, ValidateChecksTheFilesAndNamesTheComponentsThatWouldRun) {
  int status = -1;
  std::string out = run("validate " + quoted(pipeline()) + " --set registration.cost.plugin=cpu.cr", &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("cost      cpu.cr"), std::string::npos) << out;
  EXPECT_NE(out.find("optimizer optim.powell"), std::string::npos) << out;
  const struct {
    std::string sets, expected;
  } cases[] = {
      {" --set inputs.moving=" + quoted(dir_ / "none.nii.gz"), "inputs.moving: cannot read image"},
      {" --set inputs.reference=" + quoted(dir_ / "demo"), "inputs.reference: cannot read image"},
      {" --set outputs.dir=" + quoted(dir_ / "no" / "such" / "folder"), "its parent folder does not exist"},
      {" --set evaluation.truth=" + quoted(dir_ / "none.txt"), "evaluation.truth"},
  };
  for (const auto& c : cases) {
    out = run("validate " + quoted(pipeline()) + c.sets, &status);
    EXPECT_EQ(status, 2) << c.sets << "\n" << out;
    EXPECT_NE(out.find(c.expected), std::string::npos) << c.sets << "\n" << out;
  }
}

// A run that fails leaves no folder it made (issue 14: "a failed run leaves no empty output
// folder"); an existing folder stays.
TEST_F(CliTest, AFailedRunLeavesNoNewFolder) {
  int status = -1;
  const fs::path made = dir_ / "fresh";
  std::string out = run("run -q " + quoted(pipeline()) + " --set inputs.moving=" + quoted(dir_ / "none.nii.gz") +
                            " --set outputs.dir=" + quoted(made),
                        &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_FALSE(fs::exists(made));
  fs::create_directory(made);
  out = run("run -q " + quoted(pipeline()) + " --set inputs.moving=" + quoted(dir_ / "none.nii.gz") +
                " --set outputs.dir=" + quoted(made),
            &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_TRUE(fs::is_directory(made));
}

// Without a terminal (a log, a pipe, a cluster job) progress comes as lines while the run goes,
// and the percentage never goes back.
TEST_F(CliTest, ProgressWithoutATerminalIsLinesThatOnlyGoForward) {
  int status = -1;
  const std::string out = run("run " + quoted(pipeline()) + " --set registration.cost.plugin=cpu.cr" +
                                  " --set registration.levels_mm=[8,4,2] --set registration.min_sampling_mm=0",
                              &status);
  ASSERT_EQ(status, 0) << out;
  std::vector<int> percents;
  for (size_t at = out.find("regpipe progress: "); at != std::string::npos;
       at = out.find("regpipe progress: ", at + 1))
    percents.push_back(std::stoi(out.substr(at + 18, 3)));
  ASSERT_GE(percents.size(), 3u) << out;
  EXPECT_TRUE(std::is_sorted(percents.begin(), percents.end())) << out;
  EXPECT_EQ(percents.back(), 100) << out;
}

// A second run into the same folder leaves only its own files: the first run's qa.png and
// registered.nii.gz go when the second writes neither (issue 14: no stale files mixed in).
TEST_F(CliTest, ARerunIntoTheSameFolderLeavesNoFileOfTheEarlierRun) {
  const fs::path out = dir_ / "again";
  const std::string common = "run -q " + quoted(pipeline()) +
                             " --set registration.cost.plugin=cpu.cr --set registration.levels_mm=[8]" +
                             " --set outputs.dir=" + quoted(out);
  int status = -1;
  std::string text = run(common + " --set outputs.qa_png=true", &status);
  ASSERT_EQ(status, 0) << text;
  ASSERT_TRUE(fs::exists(out / "qa.png"));
  ASSERT_TRUE(fs::exists(out / "registered.nii.gz"));
  std::ofstream(out / "notes.txt") << "a user's own file";
  text = run(common + " --set outputs.image_format=.nii", &status);
  ASSERT_EQ(status, 0) << text;
  EXPECT_FALSE(fs::exists(out / "qa.png"));
  EXPECT_FALSE(fs::exists(out / "registered.nii.gz"));
  EXPECT_TRUE(fs::exists(out / "registered.nii"));
  EXPECT_TRUE(fs::exists(out / "transform.mat"));
  EXPECT_TRUE(fs::exists(out / "notes.txt"));  // not regpipe's: kept
}

// optim.flirt declares DOF 6, 7, 9 and 12 (ABI 1.2): dof 3, which the pipeline schema
// allows, is refused while validating, naming the optimizer, what it supports and what
// supports 3, before any image is read (the missing moving image is never reported).
TEST_F(CliTest, DofTheOptimizerDoesNotSupportFailsValidationBeforeImages) {
  const std::string expected =
      "--set registration.dof: registration.dof=3 is not supported by optimizer 'optim.flirt', "
      "which supports DOF 6, 7, 9 or 12; optimizers that support 3 DOF: optim.powell";
  const std::string flirt_dof3 =
      " --set registration.optimizer.plugin=optim.flirt --set registration.dof=3";
  int status = -1;
  std::string out = run("validate " + quoted(pipeline()) + flirt_dof3, &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  out = run("run " + quoted(pipeline()) + " --quiet --set registration.cost.plugin=cpu.cr" + flirt_dof3 +
                " --set inputs.moving=" + quoted(dir_ / "missing.nii.gz"),
            &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find(expected), std::string::npos) << out;
  EXPECT_EQ(out.find("missing.nii.gz"), std::string::npos) << "an image was read first:\n" << out;
  EXPECT_TRUE(files_under(dir_ / "demo" / "result").empty());
  // A DOF it supports passes.
  out = run("validate " + quoted(pipeline()) + " --set registration.optimizer.plugin=optim.flirt "
            "--set registration.dof=6", &status);
  EXPECT_EQ(status, 0) << out;
}

// Of a preference list, an optimizer that does not support the DOF is skipped like one that
// cannot run here, and the run says so.
TEST_F(CliTest, OptimizerPreferenceListSkipsOneWithoutTheDof) {
  int status = -1;
  const std::string out =
      run("run " + quoted(pipeline()) + " --quiet --set registration.cost.plugin=cpu.cr "
          "--set registration.optimizer.plugin=[optim.flirt,optim.powell] --set registration.dof=3 "
          "--set registration.levels_mm=[8]", &status);
  ASSERT_EQ(status, 0) << out;
  nlohmann::json report = nlohmann::json::parse(std::ifstream(dir_ / "demo" / "result" / "report.json"));
  EXPECT_EQ(report["components"]["optimizer"]["id"], "optim.powell");
  EXPECT_EQ(report["components"]["optimizer"]["instead_of"],
            "optim.flirt: supports DOF 6, 7, 9 or 12, not registration.dof=3");
}

// outputs.parallel_io (the default) reads the reference and the moving image in two threads;
// when both fail, the reference's error is the one reported, as when they are read in turn.
TEST_F(CliTest, BothImagesUnreadableReportsTheReferenceOnly) {
  std::ofstream(dir_ / "corrupt.nii.gz") << "not a nifti file at all";
  for (const char* parallel : {"true", "false"}) {
    int status = -1;
    const std::string out = run("run " + quoted(pipeline()) + " --quiet --set registration.cost.plugin=cpu.cr" +
                                    " --set outputs.parallel_io=" + parallel + " --set inputs.reference=" +
                                    quoted(dir_ / "corrupt.nii.gz") + " --set inputs.moving=" +
                                    quoted(dir_ / "missing.nii.gz"),
                                &status);
    EXPECT_EQ(status, 2) << out;
    EXPECT_NE(out.find("corrupt.nii.gz"), std::string::npos) << parallel << ":\n" << out;
    EXPECT_EQ(out.find("missing.nii.gz"), std::string::npos) << parallel << ":\n" << out;
  }
}

// outputs.parallel_io makes the reference's levels while the moving image is still being read,
// planning them from the moving image's header: the transform is the one of a read in turn, bit
// for bit, also when the moving image is the coarser (its 6 mm voxels raise the last level).
TEST_F(CliTest, LevelsMadeWhileTheMovingImageIsReadGiveTheTransformOfAReadInTurn) {
  std::string out;
  ASSERT_EQ(run_command(cli() + " phantom " + quoted(dir_ / "coarse") + " --size 28 --voxel-mm 6", &out), 0) << out;
  for (const fs::path& moving : {dir_ / "demo" / "moving.nii.gz", dir_ / "coarse" / "moving.nii.gz"}) {
    std::string transforms[2];
    for (const int parallel : {0, 1}) {
      int status = -1;
      out = run("run " + quoted(pipeline()) + " --quiet --set registration.cost.plugin=cpu.cr" +
                    " --set 'registration.levels_mm=[8,4]' --set inputs.moving=" + quoted(moving) +
                    " --set outputs.parallel_io=" + (parallel ? "true" : "false") +
                    " --set outputs.dir=" + quoted(dir_ / ("out" + std::to_string(parallel))),
                &status);
      ASSERT_EQ(status, 0) << out;
      std::ifstream in(dir_ / ("out" + std::to_string(parallel)) / "transform.mat");
      transforms[parallel] = std::string(std::istreambuf_iterator<char>(in), {});
      const nlohmann::json report =
          nlohmann::json::parse(std::ifstream(dir_ / ("out" + std::to_string(parallel)) / "report.json"));
      EXPECT_EQ(report["registration"]["sampled_levels_mm"].back().get<double>(), moving.parent_path() == dir_ / "coarse" ? 6.0 : 4.0);
    }
    EXPECT_FALSE(transforms[0].empty());
    EXPECT_EQ(transforms[0], transforms[1]) << moving;
  }
}

// -q: nothing on stdout (scripts read the files); a warning or error still reaches stderr.
TEST_F(CliTest, QuietPrintsNothingOnStdout) {
  for (const char* flag : {"-q", "--quiet"}) {
    int status = -1;
    const std::string out = run("run " + quoted(pipeline()) + " " + flag +
                                    " --set registration.cost.plugin=cpu.cr --set registration.levels_mm=[8] 2>/dev/null",
                                &status);
    EXPECT_EQ(status, 0) << flag;
    EXPECT_EQ(out, "") << flag;
  }
  int status = -1;
  const std::string out = run("run " + quoted(pipeline()) + " -q --set inputs.moving=" + quoted(dir_ / "none.nii.gz"), &status);
  EXPECT_EQ(status, 2);
  EXPECT_NE(out.find("none.nii.gz"), std::string::npos) << out;
}

TEST_F(CliTest, PluginsListsComponentsAsTextAndJson) {
  int status = -1;
  std::string out = run("plugins", &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("cost  cpu.cr"), std::string::npos) << out;
  out = run("plugins --json", &status);
  ASSERT_EQ(status, 0) << out;
  const auto j = nlohmann::json::parse(out);
  std::set<std::string> ids;
  for (const auto& c : j["components"]) {
    ids.insert(c["id"].get<std::string>());
    EXPECT_FALSE(c["library"].get<std::string>().empty());
  }
  for (const char* id : {"cpu.cr", "cpu.mi", "cpu.nmi", "cpu.ncc", "cpu.ls", "optim.powell", "resample.cpu"})
    EXPECT_EQ(ids.count(id), 1u) << id;
}

// Each bad input: a clear message, a non-zero exit, and no output file left behind.
struct BadInput {
  const char* name;
  std::string set;       // --set arguments
  std::string expected;  // part of the message
};

void PrintTo(const BadInput& c, std::ostream* os) { *os << c.name; }

class CliBadInput : public CliTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(CliBadInput, FailsClearlyAndLeavesNoOutput) {
  const BadInput& c = GetParam();
  // Fixtures some cases refer to.
  std::ofstream(dir_ / "corrupt.nii.gz") << "not a nifti file at all";
  {
    const auto ref = regpipe::read_image(dir_ / "demo" / "reference.nii.gz");
    regpipe::Image constant = ref;
    std::fill(constant.data.begin(), constant.data.end(), 7.0f);
    regpipe::write_image(constant, dir_ / "constant.nii.gz");
    regpipe::Image far = ref;
    far.voxel_to_world(0, 3) += 5000.0;
    regpipe::write_image(far, dir_ / "far.nii.gz");
    std::string truncated;
    std::ifstream in(dir_ / "demo" / "moving.nii.gz", std::ios::binary);
    truncated.assign(std::istreambuf_iterator<char>(in), {});
    std::ofstream(dir_ / "truncated.nii.gz", std::ios::binary) << truncated.substr(0, truncated.size() / 2);
  }
  std::string set = c.set;
  for (size_t at; (at = set.find("@")) != std::string::npos;) set.replace(at, 1, dir_.path().string() + "/");
  int status = -1;
  const std::string out = run("run " + quoted(pipeline()) + " --quiet --set registration.cost.plugin=cpu.cr " + set, &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find(c.expected), std::string::npos) << "output was:\n" << out;
  EXPECT_TRUE(files_under(dir_ / "demo" / "result").empty());
  EXPECT_TRUE(files_under(dir_ / "out").empty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliBadInput,
    ::testing::Values(
        BadInput{"MissingFile", "--set inputs.moving=@missing.nii.gz", "missing.nii.gz"},
        BadInput{"CorruptNifti", "--set inputs.moving=@corrupt.nii.gz", "corrupt.nii.gz"},
        BadInput{"TruncatedNifti", "--set inputs.moving=@truncated.nii.gz", "truncated.nii.gz"},
        BadInput{"SequentialIoCorruptNifti",
                 "--set outputs.parallel_io=false --set inputs.moving=@corrupt.nii.gz", "corrupt.nii.gz"},
        BadInput{"UnknownPlugin", "--set registration.optimizer.plugin=optim.bogus",
                 "unknown optimizer plugin 'optim.bogus'"},
        BadInput{"MisspelledKey", "--set registration.levels=[4]", "unknown key 'levels' in registration (did you mean 'levels_mm'?)"},
        BadInput{"WrongType", "--set registration.cost.params.bins=many", "bins=many is not an integer"},
        BadInput{"ConstantImage", "--set inputs.moving=@constant.nii.gz", "constant"},
        BadInput{"NoOverlap", "--set inputs.moving=@far.nii.gz --set registration.initialisation=identity",
                 "does not overlap"},
        BadInput{"UnwritableOutput", "--set outputs.dir=@no/such/folder", "its parent folder does not exist"},
        // Parameter errors come before any image is read: the missing or corrupt moving
        // image would fail otherwise, with another message.
        BadInput{"SearchRangeInvertedBeforeImages",
                 "--set inputs.moving=@missing.nii.gz --set registration.optimizer.plugin=optim.flirt "
                 "--set registration.optimizer.params.searchrx_min_deg=30 "
                 "--set registration.optimizer.params.searchrx_max_deg=-30",
                 "searchrx_min_deg=30 is above searchrx_max_deg=-30"},
        BadInput{"StepZeroBeforeImages",
                 "--set inputs.moving=@corrupt.nii.gz --set registration.optimizer.plugin=optim.flirt "
                 "--set registration.optimizer.params.coarsesearch_deg=0",
                 "coarsesearch_deg"},
        BadInput{"StepWiderThanRangeBeforeImages",
                 "--set inputs.moving=@corrupt.nii.gz --set registration.optimizer.plugin=optim.flirt "
                 "--set registration.optimizer.params.searchry_min_deg=-20 "
                 "--set registration.optimizer.params.searchry_max_deg=20",
                 "coarsesearch_deg=60 is larger than the search range about y (-20..20, 40 degrees)"},
        BadInput{"BinsPerLevelWithoutBinsBeforeImages",
                 "--set inputs.moving=@missing.nii.gz --set registration.bins_per_level=true "
                 "--set registration.cost.plugin=cpu.ncc --set registration.cost.params={}",
                 "the cost cpu.ncc has no 'bins' parameter"},
        BadInput{"DecoupleGridsNotABoolBeforeImages",
                 "--set inputs.moving=@missing.nii.gz --set registration.decouple_grids=maybe",
                 "registration.decouple_grids=maybe is not a boolean (true or false)"},
        BadInput{"MinOverlapOutOfRangeBeforeImages",
                 "--set inputs.moving=@missing.nii.gz --set registration.min_overlap=1",
                 "registration.min_overlap=1 is outside [0, 1)"},
        BadInput{"DofUnsupportedByOptimizerBeforeImages",
                 "--set inputs.moving=@missing.nii.gz --set registration.optimizer.plugin=optim.flirt "
                 "--set registration.dof=3",
                 "registration.dof=3 is not supported by optimizer 'optim.flirt'"},
        BadInput{"CostParamBeforeImages",
                 "--set inputs.moving=@missing.nii.gz --set registration.cost.params.bins=1",
                 "bins=1"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return std::string(info.param.name); });
