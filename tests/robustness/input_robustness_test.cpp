// Bad input to `regpipe run` and `validate`, refused with the file or key named and status 2,
// leaving no output: voxels that are not finite (or masked on request), pipeline files that
// are not files, nested past reason or keyed absurdly deep, a null output folder, and two runs
// into one folder at once.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

class InputRobustness : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string out;
    ASSERT_EQ(run_command(cli() + " phantom '" + demo().string() + "' --size 40 --voxel-mm 4", &out), 0) << out;
  }
  static std::string cli() { return "'" + regpipe::test::regpipe_cli().string() + "'"; }
  fs::path demo() const { return dir_ / "demo"; }
  fs::path result() const { return demo() / "result"; }
  // `regpipe <command> <demo pipeline> <args>` on the CPU: its status, and its output in *out.
  int run(const std::string& command, const std::string& args, std::string* out) const {
    return run_command(cli() + " " + command + " '" + (demo() / "pipeline.yaml").string() +
                           "'" + (command == "run" ? " -q" : "") +
                           " --set registration.cost.plugin=cpu.cr --set registration.resampler.plugin=resample.cpu " + args,
                       out);
  }
  // A copy of the phantom image `name` with `value` in the voxels `at` (indices), as `file`:
// MetaImage or NRRD, since ITK's NIfTI reader turns non-finite voxels into 0 itself.
  fs::path spoiled(const std::string& name, float value, std::vector<size_t> at, const std::string& file) const {
    regpipe::Image image = regpipe::read_image(demo() / name);
    for (size_t i : at) image.data.at(i) = value;
    regpipe::write_image(image, dir_ / file, regpipe::VoxelType::float32);
    return dir_ / file;
  }
  // An image of ones on the moving grid (a weight), with `value` at `at`.
  fs::path weight(float value, size_t at) const {
    regpipe::Image image = regpipe::read_image(demo() / "moving.nii.gz");
    std::fill(image.data.begin(), image.data.end(), 1.0f);
    image.data.at(at) = value;
    regpipe::write_image(image, dir_ / "weight.mha", regpipe::VoxelType::float32);
    return dir_ / "weight.mha";
  }
  static std::string q(const fs::path& p) { return "'" + p.string() + "'"; }
  regpipe::test::TempDir dir_;
};

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

void expect_refused(int status, const std::string& out, const std::vector<std::string>& words) {
  EXPECT_EQ(status, 2) << out;
  for (const auto& w : words) EXPECT_NE(out.find(w), std::string::npos) << "missing '" << w << "' in: " << out;
}

}  // namespace

// ---- voxels that are not finite ----

TEST_F(InputRobustness, NaNVoxelsInTheMovingImageAreRefusedCountedAndLocated) {
  // Voxel (3, 2, 1) of a 40^3 grid is 3 + 40 * (2 + 40 * 1).
  const fs::path moving = spoiled("moving.nii.gz", kNaN, {3 + 40 * (2 + 40 * 1), 5000, 9000}, "nan.mha");
  std::string out;
  const int status = run("run", "--set inputs.moving=" + q(moving), &out);
  expect_refused(status, out, {moving.string(), "3 of its 64000 voxels are not finite", "voxel (3, 2, 1)", "inputs.non_finite: mask"});
  EXPECT_FALSE(fs::exists(result()));
}

TEST_F(InputRobustness, InfiniteVoxelsInTheReferenceAreRefused) {
  const fs::path reference = spoiled("reference.nii.gz", -kInf, {12345}, "inf.nrrd");
  std::string out;
  expect_refused(run("run", "--set inputs.reference=" + q(reference), &out), out, {reference.string(), "1 of its", "not finite"});
  EXPECT_FALSE(fs::exists(result()));
}

TEST_F(InputRobustness, ANaNWeightIsRefusedNamingTheWeight) {
  const fs::path w = weight(kNaN, 777);
  std::string out;
  expect_refused(run("run", "--set inputs.moving_weight=" + q(w), &out), out, {w.string(), "1 of its", "not finite"});
}

// With inputs.non_finite: mask the voxels take no part: the phantom's known misalignment is
// still recovered, with each cost family.
TEST_F(InputRobustness, MaskedNonFiniteVoxelsLeaveTheRegistrationAccurate) {
  std::vector<size_t> blob;
  for (size_t z = 15; z < 20; ++z)
    for (size_t y = 15; y < 20; ++y)
      for (size_t x = 15; x < 20; ++x) blob.push_back(x + 40 * (y + 40 * z));
  const fs::path moving = spoiled("moving.nii.gz", kNaN, blob, "nan_blob.mha");
  for (const char* cost : {"cpu.cr", "cpu.mi"}) {
    std::string out;
    ASSERT_EQ(run("run", std::string("--set inputs.moving=") + q(moving) + " --set inputs.non_finite=mask --set registration.cost.plugin=" + cost, &out), 0) << out;
    const auto report = nlohmann::json::parse(std::ifstream(result() / "report.json"));
    EXPECT_LT(report["evaluation"]["mean_displacement_mm"].get<double>(), 0.6) << cost;
    EXPECT_TRUE(std::isfinite(report["result"]["final_cost"].get<double>())) << cost;
  }
}

// ---- pipeline files ----

TEST_F(InputRobustness, APipelinePathThatIsNotAFileIsRefusedSayingWhatItIs) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo.yaml").c_str(), 0600), 0);
  regpipe::write_text_atomically(dir_ / "huge.yaml", std::string(17u << 20, '#'));
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {dir_.path(), "it is a folder"},
      {dir_ / "fifo.yaml", "FIFO"},
      {"/dev/zero", "it is a device"},
      {dir_ / "absent.yaml", "no such file"},
      {dir_ / "huge.yaml", "17 MiB, more than the 16 MiB"}};
  for (const auto& [path, what] : cases) {
    std::string out;
    const int status = run_command("timeout 20 " + cli() + " validate " + q(path), &out);
    expect_refused(status, out, {path.string(), what});
  }
}

TEST_F(InputRobustness, YamlNestedPastReasonIsRefusedSayingSo) {
  std::string flow = "inputs: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  std::string block;
  for (int i = 0; i < 3000; ++i) block += std::string(size_t(i), ' ') + "k" + std::to_string(i) + ":\n";
  for (const auto& [name, text] : {std::pair{"flow.yaml", flow}, std::pair{"block.yaml", block}}) {
    regpipe::write_text_atomically(dir_ / name, text);
    std::string out;
    expect_refused(run_command(cli() + " validate " + q(dir_ / name), &out), out, {name, "nested too deeply"});
  }
}

TEST_F(InputRobustness, AKeyPathOfThousandsOfSegmentsIsRefusedNotOverflowingTheStack) {
  std::string key = "a";
  for (int i = 0; i < 60000; ++i) key += ".a";
  std::string out;
  expect_refused(run("validate", "--set " + key + "=1", &out), out, {"--set a.a.a", "more than 16 key segments", "(120001 characters)"});
  expect_refused(run("validate", "--set registration.cost.params.bins.x.y=1", &out), out, {"registration.cost.params.bins"});
}

TEST_F(InputRobustness, AVolumeIndexOf2To32IsRefusedNotWrappedToVolume0) {
  for (const char* key : {"inputs.moving_volume", "inputs.reference_volume"}) {
    std::string out;
    expect_refused(run("validate", std::string("--set ") + key + "=4294967296", &out), out,
                   {key, "4294967296 is beyond any file's volumes"});
    expect_refused(run("validate", std::string("--set ") + key + "=-1", &out), out, {key, "-1 must be >= 0"});
  }
}

TEST_F(InputRobustness, ANullOutputFolderIsRefused) {
  regpipe::write_text_atomically(demo() / "null_dir.yaml",
                                 "inputs: {reference: reference.nii.gz, moving: moving.nii.gz}\noutputs: {dir: ~}\n");
  std::string out;
  expect_refused(run_command(cli() + " validate " + q(demo() / "null_dir.yaml"), &out), out, {"outputs.dir is null"});
}

// ---- two runs, one folder ----

TEST_F(InputRobustness, ASecondRunIntoAFolderInUseIsRefusedAndTheFirstCompletes) {
  std::string out;
  ASSERT_EQ(run_command(cli() + " phantom '" + (dir_ / "big").string() + "' --size 72 --voxel-mm 2.5", &out), 0) << out;
  const std::string command = cli() + " run '" + (dir_ / "big" / "pipeline.yaml").string() +
                              "' -q --set registration.cost.plugin=cpu.cr --set registration.resampler.plugin=resample.cpu"
                              " --set 'registration.levels_mm=[8, 4, 2]' --set outputs.dir=" + q(dir_ / "shared");
  regpipe::test::BackgroundCommand first(command, dir_ / "first.log");
  for (int i = 0; i < 400 && !fs::exists(dir_ / "shared"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(dir_ / "shared"));  // made, and locked, by the first run
  const int second = run_command(command, &out);
  const int first_status = first.wait();
  ASSERT_EQ(first_status, 0);
  if (second == 0) GTEST_SKIP() << "the first run ended before the second began: nothing tested";
  expect_refused(second, out, {(dir_ / "shared").string(), "being written by another regpipe run"});
  EXPECT_TRUE(fs::exists(dir_ / "shared" / "report.json"));
}

// Levels far finer than the image (0.001 mm asked a 640 GB level; 1e-300 overflowed) are
// refused before anything is allocated, naming the key and a level that fits.
TEST_F(InputRobustness, ALevelTooFineToHoldIsRefusedNamingOneThatFits) {
  for (const char* level : {"0.001", "1e-300"}) {
    std::string out;
    // min_sampling_mm 0: the level as asked (by default it would run at the images' voxels).
    expect_refused(run("run", std::string("--set registration.min_sampling_mm=0 --set 'registration.levels_mm=[") +
                                  level + "]'",
                       &out),
                   out,
                   {"registration.levels_mm: a " + std::string(level == std::string("0.001") ? "0.001" : "1e-300") +
                        " mm level of a 40x40x40 image", "more than this machine can hold", "mm and coarser fit"});
    EXPECT_FALSE(fs::exists(result())) << level;
  }
}

// A FIFO, a device or a folder given as an image is refused at once, never read (a FIFO
// blocked the reader forever).
TEST_F(InputRobustness, AnImagePathThatIsNotAFileIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo.nii.gz").c_str(), 0600), 0);
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {dir_ / "fifo.nii.gz", "it is a FIFO (named pipe), not a file"},
      {"/dev/zero", "it is a device, not a file"},
      {dir_.path(), "it is a folder, not a file"}};
  for (const auto& [path, what] : cases)
    for (const char* key : {"inputs.moving", "inputs.reference", "inputs.moving_weight"}) {
      std::string out;
      const int status = run_command("timeout 20 " + cli() + " run '" + (demo() / "pipeline.yaml").string() +
                                         "' -q --set registration.cost.plugin=cpu.cr --set " + key + "=" + q(path),
                                     &out);
      expect_refused(status, out, {"cannot read image '" + path.string() + "'", what});
      EXPECT_FALSE(fs::exists(result())) << key;
    }
}

// The same for a transform file, in each of its readers.
TEST_F(InputRobustness, ATransformPathThatIsAFifoIsRefusedAtOnce) {
  for (const char* name : {"fifo.mat", "fifo.tfm"}) {
    ASSERT_EQ(::mkfifo((dir_ / name).c_str(), 0600), 0);
    const std::string fifo = (dir_ / name).string();
    for (const std::string& message :
         {regpipe::test::message_of([&] { regpipe::detect_transform_format(dir_ / name); }),
          regpipe::test::message_of([&] { regpipe::read_matrix_file(dir_ / name); }),
          regpipe::test::message_of([&] { regpipe::read_itk_transform(dir_ / name); })})
      EXPECT_NE(message.find("'" + fifo + "': it is a FIFO (named pipe), not a file"), std::string::npos) << message;
  }
}
