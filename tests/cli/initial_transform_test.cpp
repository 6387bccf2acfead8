// Where a registration starts: registration.initial_transform in every format (FLIRT -init,
// antsRegistration --initial-moving-transform), and the initialisations. The phantom's moving
// image is its reference's voxels under a header turned 70 degrees: too far for Powell from the
// centres of mass, which is what the other starts are for.
#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }
std::string cli() { return quoted(regpipe::test::regpipe_cli()); }

class StartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string out;
    ASSERT_EQ(run_command(cli() + " phantom " + quoted(dir_ / "p") + " --size 40 --voxel-mm 4 --angle-deg 70 --shift-mm 5",
                          &out),
              0)
        << out;
  }
  fs::path in(const std::string& name) const { return dir_ / "p" / name; }
  // Runs the phantom's pipeline (cpu.cr, optim.powell, 8 and 4 mm) with `sets`; the status,
  // and the mean displacement error against the truth through `error_mm`.
  int run(const std::string& sets, double* error_mm, std::string* out) {
    const fs::path result = dir_ / ("out_" + std::to_string(runs_++));
    const int status = run_command(cli() + " run -q " + quoted(in("pipeline.yaml")) +
                                       " --set registration.cost.plugin=cpu.cr --set outputs.dir=" +
                                       quoted(result) + " " + sets,
                                   out);
    if (status == 0)
      *error_mm = nlohmann::json::parse(std::ifstream(result / "report.json"))["evaluation"]["mean_displacement_mm"];
    return status;
  }
  double error_with(const std::string& sets) {
    double error = -1.0;
    std::string out;
    EXPECT_EQ(run(sets, &error, &out), 0) << sets << "\n" << out;
    std::printf("%s: mean displacement error %.4f mm\n", sets.c_str(), error);
    return error;
  }
  regpipe::test::TempDir dir_;
  int runs_ = 0;
};

TEST_F(StartTest, CentresOfMassAloneDoNotReachSeventyDegrees) {  // the negative control
  EXPECT_GT(error_with("--set registration.initialisation=centre_of_mass"), 5.0);
}

TEST_F(StartTest, PrincipalAxesAndFslScaledVoxelsDo) {
  EXPECT_LT(error_with("--set registration.initialisation=moments"), 0.5);
  // A header-only turn: FSL's scaled-voxel frames of the two images coincide.
  EXPECT_LT(error_with("--set registration.initialisation=scaled_voxels"), 0.5);
}

TEST_F(StartTest, AnInitialTransformInEveryFormatIsTheStart) {
  // The truth as a world matrix, then converted by `regpipe transform` to FSL, ITK and ANTs.
  const std::string images = " --src " + quoted(in("moving.nii.gz")) + " --ref " + quoted(in("reference.nii.gz"));
  std::string out;
  for (const std::string& target : {"fsl:truth.mat", "truth.tfm", "ants:truth_ants.mat"})
    ASSERT_EQ(run_command(cli() + " transform " + quoted(in("truth_world.txt")) + " -o " +
                              quoted(dir_ / "p" / target.substr(target.find(':') + 1)) + images +
                              (target.find(':') != std::string::npos ? " --out-format " + target.substr(0, target.find(':')) : ""),
                          &out),
              0)
        << target << "\n" << out;
  for (const char* file : {"truth_world.txt", "truth.mat", "truth.tfm", "truth_ants.mat"})
    EXPECT_LT(error_with("--set registration.initial_transform=" + quoted(in(file))), 0.5) << file;
  const auto report = nlohmann::json::parse(std::ifstream(dir_ / "out_3" / "report.json"));
  EXPECT_EQ(report["registration"]["initial_transform"], in("truth_ants.mat").string());
  EXPECT_TRUE(report["registration"]["initialisation"].is_null());
  // How the report was made: the command line, its --set keys, every parameter of the
  // components used (defaults included), the output options, host and time.
  const auto& command = report["command_line"];
  ASSERT_TRUE(command.is_array() && command.size() > 3);
  EXPECT_EQ(command[1], "run");
  EXPECT_EQ(report["overrides"]["registration.cost.plugin"], "cpu.cr");
  EXPECT_EQ(report["components"]["cost"]["params"]["bins"], 64);  // the phantom pipeline's
  EXPECT_EQ(report["components"]["optimizer"]["params"]["max_iterations"], 200);  // optim.powell's default
  EXPECT_EQ(report["outputs"]["interpolation"], "bspline");
  EXPECT_FALSE(report["host"].get<std::string>().empty());
  EXPECT_EQ(report["created_utc"].get<std::string>().size(), 20u);
}

TEST_F(StartTest, BadInitialTransformsAreRefusedNamingTheKeyOrFile) {
  std::ofstream(in("mirror.txt")) << "-1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n";
  std::ofstream(in("garbage.tfm")) << "not a transform\n";
  struct Case {
    std::string sets, expected;
  };
  const Case cases[] = {
      {"--set registration.initial_transform=" + quoted(in("none.txt")), "does not exist"},
      {"--set registration.initial_transform=" + quoted(dir_ / "p"), "is not a regular file"},
      {"--set registration.initial_transform=" + quoted(in("truth_world.txt")) +
           " --set registration.initialisation=moments",
       "both set"},
      {"--set registration.initial_transform=" + quoted(in("truth_world.txt")) +
           " --set registration.initial_transform_format=spm",
       "initial_transform_format"},
      {"--set registration.initial_transform=" + quoted(in("mirror.txt")), "mirror.txt"},
      {"--set registration.initial_transform=" + quoted(in("garbage.tfm")), "garbage.tfm"},
      {"--set registration.initialisation=principal", "registration.initialisation"},
  };
  for (const Case& c : cases) {
    double error = 0.0;
    std::string out;
    EXPECT_EQ(run(c.sets, &error, &out), 2) << c.sets << "\n" << out;
    EXPECT_NE(out.find(c.expected), std::string::npos) << c.sets << "\n" << out;
  }
}

}  // namespace
