// `regpipe run` with registration.stages [affine, syn] (issue 16, items 4 and 6): the head
// phantom warped by a smooth bump and shifted is registered closer to the reference than by the affine
// stage alone; 1Warp.nii.gz and 1InverseWarp.nii.gz are ITK/ANTs fields on the reference grid;
// `regpipe apply -t 0GenericAffine.mat -t 1Warp.nii.gz` reproduces the registered image; the
// report lists the stages. Needs optim.syn (skipped, naming it, where it is not built).
#include <regpipe/host/displacement_field_io.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/plugin_host.hpp>
#include <regpipe/host/resample_through_chain.hpp>

#include "support/test_support.hpp"

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace fs = std::filesystem;
using regpipe::Image;
using regpipe::test::run_command;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

double mean_squared_difference(const Image& a, const Image& b) {
  EXPECT_EQ(a.dims, b.dims);
  double sum = 0.0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) sum += double(a.data[i] - b.data[i]) * (a.data[i] - b.data[i]);
  return sum / double(a.data.size());
}

float max_difference(const Image& a, const Image& b) {
  EXPECT_EQ(a.dims, b.dims);
  float largest = 0.0f;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
    largest = std::max(largest, std::abs(a.data[i] - b.data[i]));
  return largest;
}

// The bump's displacement at world point p (LPS mm) about `centre`.
Eigen::Vector3d bump_at(const Eigen::Vector3d& p, const Eigen::Vector3d& centre, double peak_mm, double sigma_mm) {
  const Eigen::Vector3d direction = Eigen::Vector3d(1.0, 0.5, -0.5).normalized();
  return peak_mm * std::exp(-(p - centre).squaredNorm() / (2.0 * sigma_mm * sigma_mm)) * direction;
}

Eigen::Vector3d grid_centre(const Image& grid) {
  const Eigen::Vector4d middle(0.5 * (grid.dims[0] - 1.0), 0.5 * (grid.dims[1] - 1.0), 0.5 * (grid.dims[2] - 1.0), 1.0);
  return (grid.voxel_to_world * middle).head<3>();
}

// A smooth bump on `grid`: vectors along (1, 0.5, -0.5) of `peak_mm` at the grid's centre,
// falling off as a Gaussian of `sigma_mm`; about zero on the border planes.
regpipe_common::DisplacementField bump_field(const Image& grid, double peak_mm, double sigma_mm) {
  regpipe_common::DisplacementField field;
  field.geometry.dims = {int(grid.dims[0]), int(grid.dims[1]), int(grid.dims[2])};
  for (int i = 0; i < 16; ++i) field.geometry.voxel_to_world[i] = grid.voxel_to_world(i / 4, i % 4);
  const Eigen::Vector3d centre = grid_centre(grid);
  for (uint32_t z = 0; z < grid.dims[2]; ++z)
    for (uint32_t y = 0; y < grid.dims[1]; ++y)
      for (uint32_t x = 0; x < grid.dims[0]; ++x) {
        const Eigen::Vector3d p = (grid.voxel_to_world * Eigen::Vector4d(x, y, z, 1.0)).head<3>();
        const Eigen::Vector3d u = bump_at(p, centre, peak_mm, sigma_mm);
        for (int c = 0; c < 3; ++c) field.vectors.push_back(float(u[c]));
      }
  return field;
}

class StagesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The T1-like head phantom, 40^3 at 4 mm, as the reference; the moving image is the same
    // pulled through an 8 mm bump (sigma 24 mm) and then its header shifted by (4, -3, 5) mm.
    reference_ = regpipe::make_head_phantom({40, 40, 40}, 4.0, 0);
    regpipe::write_image(reference_, dir_ / "reference.nii.gz", regpipe::VoxelType::float32);
    auto bump = std::make_shared<regpipe_common::DisplacementField>(bump_field(reference_, kPeakMm, kSigmaMm));
    const std::vector<regpipe::ChainStep> chain{{Eigen::Matrix4d::Identity(), bump}};
    const Image bumped = regpipe::resample_at_positions(
        reference_, reference_, regpipe::chain_sample_positions(chain, reference_, reference_),
        regpipe::Interpolation::trilinear);
    shift_.topRightCorner<3, 1>() = Eigen::Vector3d(4.0, -3.0, 5.0);
    const Image warped = regpipe::with_world_transform(bumped, shift_);
    regpipe::write_image(warped, dir_ / "moving_warped.nii.gz", regpipe::VoxelType::float32);
  }
  int regpipe(const std::string& args, std::string* out) {
    return run_command(regpipe::test::regpipe_cli().string() + " " + args, out);
  }
  // Runs a pipeline registering moving_warped.nii.gz with `registration` into dir_/`name`.
  void run(const std::string& name, const std::string& registration) {
    const fs::path yaml = dir_ / (name + ".yaml");
    std::ofstream(yaml) << "inputs:\n  reference: reference.nii.gz\n  moving: moving_warped.nii.gz\n"
                        << registration
                        << "outputs:\n  dir: " << name << "\n  interpolation: trilinear\n  datatype: float32\n";
    std::string out;
    ASSERT_EQ(regpipe("run -q " + quoted(yaml), &out), 0) << out;
  }
  static constexpr const char* kAffine =
      "    - transform: affine\n"
      "      levels_mm: [8, 4]\n"
      "      cost: {plugin: cpu.ls}\n";
  // The mean endpoint error (mm) over the head (reference > 100) of a result: a reference point
  // p goes to the moving world at x = A (p + u(p)) (A from report.json, u from `warp` or zero),
  // the moving image holds at x what the reference holds at q + b(q), q = shift^-1 x; the
  // error is |q + b(q) - p|.
  double endpoint_error(const fs::path& out, const regpipe_common::DisplacementField* warp) const {
    std::ifstream file(out / "report.json");
    const nlohmann::json m = nlohmann::json::parse(file)["result"]["reference_to_moving_world_lps"];
    Eigen::Matrix4d a;
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) a(r, c) = m[r][c].get<double>();
    const Eigen::Matrix4d back = shift_.inverse() * a;
    const Eigen::Vector3d centre = grid_centre(reference_);
    double sum = 0.0;
    size_t n = 0;
    for (uint32_t z = 0; z < reference_.dims[2]; ++z)
      for (uint32_t y = 0; y < reference_.dims[1]; ++y)
        for (uint32_t x = 0; x < reference_.dims[0]; ++x) {
          if (reference_.at(x, y, z) <= 100.0f) continue;
          const size_t v = x + size_t(reference_.dims[0]) * (y + size_t(reference_.dims[1]) * z);
          const Eigen::Vector3d p = (reference_.voxel_to_world * Eigen::Vector4d(x, y, z, 1.0)).head<3>();
          Eigen::Vector3d u = Eigen::Vector3d::Zero();
          if (warp != nullptr) u = Eigen::Vector3d(warp->vectors[3 * v], warp->vectors[3 * v + 1], warp->vectors[3 * v + 2]);
          const Eigen::Vector3d pu = p + u;
          const Eigen::Vector3d q = (back * Eigen::Vector4d(pu[0], pu[1], pu[2], 1.0)).head<3>();
          sum += (q + bump_at(q, centre, kPeakMm, kSigmaMm) - p).norm();
          ++n;
        }
    return sum / double(n);
  }
  static constexpr double kPeakMm = 8.0, kSigmaMm = 24.0;
  regpipe::test::TempDir dir_;
  Image reference_;
  Eigen::Matrix4d shift_ = Eigen::Matrix4d::Identity();
};

}  // namespace

TEST_F(StagesCliTest, AffineThenSynRegistersTheWarpAndWritesFieldsThatApplyReproduces) {
  const regpipe::PluginHost host(regpipe::test::built_plugins());
  if (host.find(RP_KIND_OPTIMIZER, "optim.syn") == nullptr) GTEST_SKIP() << "optim.syn is not built here";
  run("affine", std::string("registration:\n  stages:\n") + kAffine);
  run("syn", std::string("registration:\n  stages:\n") + kAffine +
                 "    - transform: syn\n"
                 "      cost: {plugin: cpu.lcc, params: {radius: 2}}\n"
                 "      optimizer:\n"
                 "        plugin: optim.syn\n"
                 "        params: {gradient_step: 0.25, iterations: 40x20, shrink_factors: 2x1, smoothing_sigmas: 1x0}\n");
  const Image affine = regpipe::read_image(dir_ / "affine" / "registered.nii.gz");
  const Image syn = regpipe::read_image(dir_ / "syn" / "registered.nii.gz");
  const double after_affine = mean_squared_difference(affine, reference_);
  const double after_syn = mean_squared_difference(syn, reference_);
  std::printf("mean squared difference to the reference: affine stage alone %.3f, affine + syn %.3f\n",
              after_affine, after_syn);
  EXPECT_LT(after_syn, after_affine);
  const regpipe_common::DisplacementField warp = regpipe::read_displacement_field(dir_ / "syn" / "1Warp.nii.gz");
  const double error_affine = endpoint_error(dir_ / "affine", nullptr);
  const double error_syn = endpoint_error(dir_ / "syn", &warp);
  std::printf("mean endpoint error over the head: affine stage alone %.3f mm, affine + syn %.3f mm\n", error_affine,
              error_syn);
  EXPECT_LT(error_syn, 0.6 * error_affine);
  // The affine stage's files are the same as the affine-only run's.
  EXPECT_FALSE(fs::exists(dir_ / "affine" / "1Warp.nii.gz"));

  // The fields: ITK/ANTs form (read_displacement_field refuses any intent but 1007), the
  // reference grid.
  for (const char* name : {"1Warp.nii.gz", "1InverseWarp.nii.gz"}) {
    const regpipe_common::DisplacementField field = regpipe::read_displacement_field(dir_ / "syn" / name);
    EXPECT_EQ(field.geometry.dims.nx, int(reference_.dims[0])) << name;
    EXPECT_EQ(field.geometry.dims.ny, int(reference_.dims[1])) << name;
    EXPECT_EQ(field.geometry.dims.nz, int(reference_.dims[2])) << name;
    for (int i = 0; i < 16; ++i)
      EXPECT_NEAR(field.geometry.voxel_to_world[i], reference_.voxel_to_world(i / 4, i % 4), 1e-4) << name;
    float largest = 0.0f;
    for (float v : field.vectors) largest = std::max(largest, std::abs(v));
    EXPECT_GT(largest, 1.0f) << name << " holds no displacement";
  }
  {  // intent_code 1007 in the header itself (nibabel reads it)
    std::string out;
    const int rc = run_command("/usr/bin/python3 -c \"import nibabel,sys; h=nibabel.load(sys.argv[1]).header; "
                               "print(int(h['intent_code']), tuple(h.get_data_shape()))\" " +
                                   quoted(dir_ / "syn" / "1Warp.nii.gz"),
                               &out);
    if (rc == 0) EXPECT_NE(out.find("1007 (40, 40, 40, 1, 3)"), std::string::npos) << out;
  }

  // regpipe apply through the affine then the warp, in the order the image goes through them.
  std::string out;
  ASSERT_EQ(regpipe("apply -q --interp trilinear --datatype float32 -i " + quoted(dir_ / "moving_warped.nii.gz") +
                        " -r " + quoted(dir_ / "reference.nii.gz") + " -o " +
                        quoted(dir_ / "applied.nii.gz") + " -t " + quoted(dir_ / "syn" / "0GenericAffine.mat") +
                        " -t " + quoted(dir_ / "syn" / "1Warp.nii.gz"),
                    &out),
            0)
      << out;
  const float apply_difference = max_difference(regpipe::read_image(dir_ / "applied.nii.gz"), syn);
  std::printf("regpipe apply -t 0GenericAffine.mat -t 1Warp.nii.gz against registered.nii.gz: max |difference| %g\n",
              apply_difference);
  EXPECT_LT(apply_difference, 1e-3f);

  // report.json: the stages, the syn stage's dense cost lowered.
  std::ifstream file(dir_ / "syn" / "report.json");
  const nlohmann::json report = nlohmann::json::parse(file);
  ASSERT_EQ(report.at("registration_stages").size(), 2u);
  const nlohmann::json& affine_stage = report["registration_stages"][0];
  const nlohmann::json& syn_stage = report["registration_stages"][1];
  EXPECT_EQ(affine_stage.at("transform"), "affine");
  EXPECT_EQ(affine_stage.at("dof"), 12);
  EXPECT_EQ(syn_stage.at("transform"), "syn");
  EXPECT_EQ(syn_stage.at("cost"), "cpu.lcc");
  EXPECT_EQ(syn_stage.at("optimizer"), "optim.syn");
  EXPECT_LT(syn_stage.at("final_cost").get<double>(), syn_stage.at("cost_before").get<double>());
  EXPECT_EQ(report.at("outputs").at("warp").at("forward"), "1Warp.nii.gz");
  std::printf("syn stage: cost %.5f -> %.5f, %.2f s\n", syn_stage["cost_before"].get<double>(),
              syn_stage["final_cost"].get<double>(), syn_stage["seconds"].get<double>());
}

// One affine stage is the one-stage form: the same transform files, byte for byte; and a rigid
// stage then an affine one (the second from the first's result) writes no warp.
TEST_F(StagesCliTest, OneAffineStageIsTheOneStageFormAndAffineChainsWriteNoWarp) {
  run("plain", "registration:\n  levels_mm: [8, 4]\n  cost: {plugin: cpu.ls}\n");
  run("staged", std::string("registration:\n  stages:\n") + kAffine);
  const auto bytes = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  for (const char* name : {"transform.tfm", "0GenericAffine.mat", "transform.mat", "moving_to_reference_world.txt"})
    EXPECT_EQ(bytes(dir_ / "plain" / name), bytes(dir_ / "staged" / name)) << name;
  EXPECT_EQ(max_difference(regpipe::read_image(dir_ / "plain" / "registered.nii.gz"),
                           regpipe::read_image(dir_ / "staged" / "registered.nii.gz")),
            0.0f);

  run("chain", "registration:\n  stages:\n"
               "    - {transform: rigid, levels_mm: [8], cost: {plugin: cpu.ls}}\n"
               "    - {transform: affine, levels_mm: [4], cost: {plugin: cpu.ls}}\n");
  EXPECT_FALSE(fs::exists(dir_ / "chain" / "1Warp.nii.gz"));
  std::ifstream file(dir_ / "chain" / "report.json");
  const nlohmann::json report = nlohmann::json::parse(file);
  ASSERT_EQ(report.at("registration_stages").size(), 2u);
  EXPECT_EQ(report["registration_stages"][0].at("dof"), 6);
  EXPECT_EQ(report["registration_stages"][1].at("dof"), 12);
  EXPECT_FALSE(report["outputs"].contains("warp"));
  EXPECT_EQ(report["stages"][0]["name"].get<std::string>().rfind("registration.stages[0] (rigid) ", 0), 0u)
      << report["stages"][0]["name"];
}
