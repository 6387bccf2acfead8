// The installed SDK: a third-party plugin (examples/third_party_cost) configures and builds
// against `cmake --install` output alone and runs in a pipeline via REGPIPE_PLUGIN_PATH.
#include <regpipe/host/image.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

namespace fs = std::filesystem;
using regpipe::test::run_command;

TEST(InstalledSdk, ThirdPartyCostPluginBuildsAndRunsInAPipeline) {
  regpipe::test::TempDir dir;
  const fs::path build = (regpipe::test::bin_dir() / "..").lexically_normal();
  const fs::path prefix = dir / "prefix";
  std::string out;
  ASSERT_EQ(run_command("cmake --install '" + build.string() + "' --prefix '" + prefix.string() + "'", &out), 0) << out;
  for (const char* f : {"include/regpipe/abi.h", "include/regpipe/plugin.hpp",
                        "lib/cmake/regpipe/regpipeConfig.cmake", "bin/regpipe"})
    EXPECT_TRUE(fs::exists(prefix / f)) << f;

  const fs::path example = regpipe::test::source_dir() / "examples" / "third_party_cost";
  ASSERT_EQ(run_command("cmake -S '" + example.string() + "' -B '" + (dir / "b").string() +
                            "' -G Ninja -DCMAKE_PREFIX_PATH='" + prefix.string() + "' && cmake --build '" +
                            (dir / "b").string() + "'",
                        &out),
            0)
      << out;

  // A phantom and its copy shifted by a known transform: single-modality, fit for SAD.
  ASSERT_EQ(run_command("'" + (prefix / "bin" / "regpipe").string() + "' phantom '" + (dir / "demo").string() +
                            "' --size 40 --voxel-mm 4",
                        &out),
            0)
      << out;
  const regpipe::Image ref = regpipe::read_image(dir / "demo" / "reference.nii.gz");
  const Eigen::Matrix4d truth = regpipe::rigid_about(Eigen::Vector3d(0, 0, 1), 0.1, Eigen::Vector3d::Zero(),
                                                     Eigen::Vector3d(5, -4, 3));
  regpipe::write_image(regpipe::with_world_transform(ref, truth), dir / "demo" / "shifted.nii.gz");
  regpipe::write_world_matrix(dir / "demo" / "truth.txt", regpipe::to_world_ras_forward(truth));
  std::ofstream(dir / "demo" / "sad.yaml") << "inputs: {reference: reference.nii.gz, moving: shifted.nii.gz}\n"
                                              "registration:\n  dof: 6\n  levels_mm: [8, 4]\n"
                                              "  cost: {plugin: org.example.cost.sad, params: {stride: 1}}\n"
                                              "outputs: {dir: out, registered_image: false}\n"
                                              "evaluation: {truth: truth.txt}\n";
  // The installed regpipe, finding the example plugin on REGPIPE_PLUGIN_PATH; its report.json.
  const auto run_pipeline = [&](const std::string& yaml, const std::string& outputs) {
    EXPECT_EQ(run_command("REGPIPE_PLUGIN_PATH='" + (dir / "b").string() + "' '" + (prefix / "bin" / "regpipe").string() +
                              "' run --quiet '" + (dir / "demo" / yaml).string() + "'",
                          &out),
              0)
        << out;
    return nlohmann::json::parse(std::ifstream(dir / "demo" / outputs / "report.json"));
  };
  const auto report = run_pipeline("sad.yaml", "out");
  EXPECT_EQ(report["components"]["cost"]["id"], "org.example.cost.sad");
  EXPECT_NE(report["components"]["optimizer"]["library"].get<std::string>().find(prefix.string()), std::string::npos)
      << "the installed regpipe finds the installed plugins";
  EXPECT_LT(report["evaluation"]["mean_displacement_mm"].get<double>(), 1.0);

  // The same plugin's dense gradient (RP_EXT_DENSE_COST) drives a syn stage after a rigid one:
  // the moving copy is also scaled (8 % along x, -6 % along z), which the rigid stage cannot
  // undo; the deformable stage lowers the cost that is left and writes ANTs' warps.
  Eigen::Matrix4d scaled = truth;
  scaled.block<3, 3>(0, 0) = truth.block<3, 3>(0, 0) * Eigen::Vector3d(1.08, 1.0, 0.94).asDiagonal();
  regpipe::write_image(regpipe::with_world_transform(ref, scaled), dir / "demo" / "scaled.nii.gz");
  std::ofstream(dir / "demo" / "sad_syn.yaml")
      << "inputs: {reference: reference.nii.gz, moving: scaled.nii.gz}\n"
         "registration:\n  stages:\n"
         "    - {transform: rigid, levels_mm: [8, 4], cost: {plugin: org.example.cost.sad}}\n"
         "    - transform: syn\n      cost: {plugin: org.example.cost.sad}\n"
         "      optimizer: {plugin: optim.syn, params: {iterations: 10x5, shrink_factors: 2x1, smoothing_sigmas: 1x0}}\n"
         "outputs: {dir: out_syn, registered_image: false}\n";
  const auto syn = run_pipeline("sad_syn.yaml", "out_syn");
  const auto& stage = syn["registration_stages"].at(1);
  EXPECT_EQ(stage["cost"], "org.example.cost.sad") << stage;
  EXPECT_LT(stage["final_cost"].get<double>(), stage["cost_before"].get<double>()) << stage;
  EXPECT_TRUE(fs::exists(dir / "demo" / "out_syn" / "1Warp.nii.gz"));
}
