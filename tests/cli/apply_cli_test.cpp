// `regpipe apply`: the registered image of `regpipe run` recovered from its transform files, a
// known shift moving the voxels where it should, chains equal to their product, 4D series
// volume by volume, label maps resampled without new values, and bad input refused (exit
// status 2, the file and the problem named, no output written).
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <Eigen/Dense>
#include <fstream>
#include <set>

namespace fs = std::filesystem;
using regpipe::Image;
using regpipe::TransformFormat;
using regpipe::test::run_command;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

float max_difference(const Image& a, const Image& b) {
  EXPECT_EQ(a.dims, b.dims);
  float largest = 0.0f;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
    largest = std::max(largest, std::abs(a.data[i] - b.data[i]));
  return largest;
}

Eigen::Matrix4d rigid(double angle, const Eigen::Vector3d& shift) {
  return regpipe::params_to_matrix({0.5 * angle, -0.3 * angle, angle, shift.x(), shift.y(), shift.z(),
                                    1, 1, 1, 0, 0, 0},
                                   {0, 0, 0});
}

class ApplyCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string out;
    ASSERT_EQ(run_command(regpipe::test::regpipe_cli().string() + " phantom " + quoted(dir_ / "demo") +
                              " --size 40 --voxel-mm 4",
                          &out),
              0)
        << out;
  }
  fs::path demo(const std::string& name) const { return dir_ / "demo" / name; }
  fs::path operator/(const std::string& name) const { return dir_ / name; }
  int regpipe(const std::string& args, std::string* out) {
    return run_command(regpipe::test::regpipe_cli().string() + " " + args, out);
  }
  // `regpipe apply` of the phantom's moving image onto its reference with ARGS; the output read back.
  Image apply(const std::string& args, const std::string& output = "out.nii.gz",
              const std::string& input = "") {
    std::string out;
    const std::string command = "apply -q -i " + quoted(input.empty() ? demo("moving.nii.gz") : fs::path(input)) +
                                " -r " + quoted(demo("reference.nii.gz")) + " -o " +
                                quoted(*this / output) + " " + args;
    EXPECT_EQ(regpipe(command, &out), 0) << command << "\n" << out;
    EXPECT_EQ(out, "") << "-q prints nothing";
    return regpipe::read_image(*this / output);
  }
  regpipe::test::TempDir dir_;
};

}  // namespace

TEST_F(ApplyCliTest, RecoversTheRegisteredImageOfRunFromEachTransformFile) {
  std::string out;
  ASSERT_EQ(regpipe("run " + quoted(demo("pipeline.yaml")) +
                        " --quiet --set registration.cost.plugin=cpu.cr --set outputs.datatype=float32 "
                        "--set registration.resampler.plugin=resample.cpu",
                        &out),
            0)
      << out;
  const Image registered = regpipe::read_image(demo("result/registered.nii.gz"));
  // run's default interpolation is bspline; the same resampler through each format.
  for (const std::string t : {"transform.tfm", "0GenericAffine.mat", "transform.mat", "transform_world.txt"}) {
    const Image applied = apply("--interp bspline --datatype float32 --resampler resample.cpu -t " +
                                quoted(demo("result/" + t)));
    EXPECT_LE(max_difference(applied, registered), 1e-3f) << t;  // values 0..1000: float rounding
    EXPECT_TRUE(applied.voxel_to_world.isApprox(registered.voxel_to_world, 1e-9)) << t;
    ASSERT_TRUE(applied.nifti && registered.nifti);
    EXPECT_EQ(applied.nifti->sform_code, registered.nifti->sform_code);
    EXPECT_EQ(applied.nifti->qform_code, registered.nifti->qform_code);
  }
  // The truth (moving world -> reference world) puts the moving image where the registration
  // put it (within half a millimetre), where the identity leaves it misaligned.
  const Image truth = apply("--interp bspline --datatype float32 -t world:" + quoted(demo("truth_world.txt")));
  regpipe::write_transform(*this / "identity.txt", TransformFormat::World, Eigen::Matrix4d::Identity());
  const Image identity = apply("--interp bspline --datatype float32 -t " + quoted(*this / "identity.txt"));
  double truth_error = 0, identity_error = 0;
  for (size_t i = 0; i < truth.data.size(); ++i) {
    truth_error += std::abs(truth.data[i] - registered.data[i]);
    identity_error += std::abs(identity.data[i] - registered.data[i]);
  }
  truth_error /= double(truth.data.size());
  identity_error /= double(truth.data.size());
  std::printf("mean |truth - registered| %.3f, |identity - registered| %.3f\n", truth_error, identity_error);
  EXPECT_LT(truth_error, 0.2 * identity_error);
}

TEST_F(ApplyCliTest, AKnownShiftMovesTheVoxels) {
  // Reference world -> moving world by +8 mm along LPS x: out(i, j, k) = in(i + 2, j, k) on the
  // reference's identity-direction 4 mm grid (resampled onto itself), for every interpolation
  // that keeps grid values.
  const Eigen::Matrix4d shift = rigid(0.0, {8.0, 0.0, 0.0});
  regpipe::write_itk_transform(*this / "shift.tfm", shift);
  const Image moving = regpipe::read_image(demo("reference.nii.gz"));
  const Eigen::Matrix3d linear = moving.voxel_to_world.topLeftCorner<3, 3>();
  ASSERT_TRUE(linear.isApprox(4.0 * Eigen::Matrix3d::Identity()));
  for (const char* interp : {"nearest", "trilinear", "sinc", "bspline", "label"}) {
    const Image out = apply(std::string("--interp ") + interp + " -t " + quoted(*this / "shift.tfm"),
                            "out.nii.gz", demo("reference.nii.gz").string());
    ASSERT_EQ(out.dims, moving.dims);
    float largest = 0.0f;
    for (uint32_t k = 0; k < 40; ++k)
      for (uint32_t j = 0; j < 40; ++j)
        for (uint32_t i = 0; i < 40; ++i) {
          const float expected = i + 2 < 40 ? moving.at(i + 2, j, k) : 0.0f;
          largest = std::max(largest, std::abs(out.at(i, j, k) - expected));
        }
    EXPECT_LE(largest, 1e-3f) << interp;
  }
}

TEST_F(ApplyCliTest, AChainEqualsItsProduct) {
  // u registers the input onto space 1 (FSL's, with space 1's image), v space 1 onto the
  // reference: reference -> input is T_u T_v.
  const Eigen::Matrix4d u = rigid(0.2, {3, -4, 5}), v = rigid(-0.15, {-6, 2, 1});
  const Image moving = regpipe::read_image(demo("moving.nii.gz"));
  Image middle = moving;
  middle.voxel_to_world.topRightCorner<3, 1>() += Eigen::Vector3d(7, -3, 2);
  regpipe::write_image(middle, *this / "middle.nii.gz");
  const Image middle_read = regpipe::read_image(*this / "middle.nii.gz");
  regpipe::write_transform(*this / "u.mat", TransformFormat::Fsl, u, {&moving, &middle_read});
  regpipe::write_itk_transform(*this / "v.tfm", v);
  regpipe::write_itk_transform(*this / "uv.tfm", u * v);
  // u's own src= (another file on the input's grid, as a matrix computed on a mean EPI) beats -i.
  fs::copy_file(demo("moving.nii.gz"), *this / "moving_copy.nii.gz");
  const Image chained = apply("-t " + quoted(*this / "u.mat") + ":src=" + quoted(*this / "moving_copy.nii.gz") +
                                  ":ref=" + quoted(*this / "middle.nii.gz") +
                                  " -t " + quoted(*this / "v.tfm"),
                              "chained.nii.gz");
  const Image product = apply("-t " + quoted(*this / "uv.tfm"), "product.nii.gz");
  EXPECT_LE(max_difference(chained, product), 1e-3f);
  // The other order is another transform: the test can tell them apart.
  regpipe::write_itk_transform(*this / "vu.tfm", v * u);
  EXPECT_GT(max_difference(apply("-t " + quoted(*this / "vu.tfm"), "vu.nii.gz"), product), 100.0f);
}

TEST_F(ApplyCliTest, ResamplesA4dSeriesVolumeByVolume) {
  const Image moving = regpipe::read_image(demo("moving.nii.gz"));
  regpipe::ImageVolumes series;
  series.volume_step = 2.5;
  for (float scale : {1.0f, 2.0f, 0.5f}) {
    series.volumes.push_back(moving);
    for (float& v : series.volumes.back().data) v *= scale;
  }
  regpipe::write_image_volumes(series, *this / "series.nii.gz");
  regpipe::write_itk_transform(*this / "t.tfm", rigid(0.1, {2, 3, -1}));
  const std::string t = "--datatype float32 -t " + quoted(*this / "t.tfm");
  const Image one = apply(t, "one.nii.gz");
  std::string out;
  ASSERT_EQ(regpipe("apply -q -i " + quoted(*this / "series.nii.gz") + " -r " + quoted(demo("reference.nii.gz")) +
                        " -o " + quoted(*this / "series_out.nii.gz") + " " + t,
                    &out),
            0)
      << out;
  const regpipe::ImageVolumes result = regpipe::read_image_volumes(*this / "series_out.nii.gz");
  ASSERT_EQ(result.volumes.size(), 3u);
  EXPECT_DOUBLE_EQ(result.volume_step, 2.5);
  const float scales[3] = {1.0f, 2.0f, 0.5f};
  for (size_t v = 0; v < 3; ++v) {
    Image expected = one;
    for (float& x : expected.data) x *= scales[v];
    EXPECT_LE(max_difference(result.volumes[v], expected), 2e-3f) << v;
    EXPECT_TRUE(result.volumes[v].voxel_to_world.isApprox(one.voxel_to_world, 1e-9));
  }
  // A 4D output must be NIfTI.
  ASSERT_EQ(regpipe("apply -i " + quoted(*this / "series.nii.gz") + " -r " + quoted(demo("reference.nii.gz")) +
                        " -o " + quoted(*this / "series_out.mha") + " " + t,
                    &out),
            2);
  EXPECT_NE(out.find("series_out.mha': a series of 3 volumes is written as 4D NIfTI"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(*this / "series_out.mha"));
}

TEST_F(ApplyCliTest, LabelModeKeepsTheLabelsAndPicksTheLargestInterpolatedIndicator) {
  // Labels from the phantom's intensities, stored as int16.
  const Image moving = regpipe::read_image(demo("moving.nii.gz"));
  Image labels = moving;
  const float values[] = {0, 3, 7, 12, 40};
  for (float& v : labels.data) v = v < 100 ? 0 : v < 300 ? 3 : v < 500 ? 7 : v < 700 ? 12 : 40;
  regpipe::write_image(labels, *this / "labels.nii.gz", regpipe::VoxelType::int16);
  regpipe::write_itk_transform(*this / "t.tfm", rigid(0.25, {3.3, -2.1, 1.7}));
  const std::string t = " -t " + quoted(*this / "t.tfm");
  const std::string in = (*this / "labels.nii.gz").string();
  const Image label = apply("--interp label" + t, "label.nii.gz", in);
  const Image nearest = apply("--interp nearest" + t, "nearest.nii.gz", in);
  EXPECT_EQ(label.file_type, regpipe::VoxelType::int16);  // the input's type

  // Every output value is a label of the input, and every label survives.
  std::set<float> seen(label.data.begin(), label.data.end());
  EXPECT_EQ(seen, std::set<float>(std::begin(values), std::end(values)));
  size_t same_as_nearest = 0;
  for (size_t i = 0; i < label.data.size(); ++i) same_as_nearest += label.data[i] == nearest.data[i];
  const double agreement = double(same_as_nearest) / double(label.data.size());
  std::printf("label mode agrees with nearest at %.2f%% of the voxels\n", 100 * agreement);
  EXPECT_GT(agreement, 0.9);
  EXPECT_LT(agreement, 1.0);  // a rotation: they differ near boundaries

  // The argmax of each label's indicator resampled trilinearly (through the resampler).
  std::vector<Image> indicators;
  for (float value : values) {
    Image indicator = labels;
    for (float& v : indicator.data) v = v == value ? 1.0f : 0.0f;
    const std::string name = "indicator" + std::to_string(int(value));
    regpipe::write_image(indicator, *this / (name + ".nii.gz"));
    indicators.push_back(apply("--interp trilinear --datatype float32" + t, name + "_out.nii.gz",
                               (*this / (name + ".nii.gz")).string()));
  }
  size_t differ = 0, inside = 0;
  for (size_t i = 0; i < label.data.size(); ++i) {
    size_t best = 0;
    double sum = 0;
    for (size_t l = 0; l < indicators.size(); ++l) {
      sum += indicators[l].data[i];
      if (indicators[l].data[i] > indicators[best].data[i]) best = l;
    }
    if (sum < 0.5) continue;  // outside the input: background
    ++inside;
    differ += label.data[i] != values[best];
  }
  std::printf("label mode differs from the indicators' argmax at %zu of %zu voxels\n", differ, inside);
  EXPECT_GT(inside, label.data.size() / 2);
  // Only exact ties (nearest's label wins them) and float rounding of near-ties may differ.
  EXPECT_LE(differ, inside / 1000);
}

TEST_F(ApplyCliTest, RefusesBadInputWithoutWritingAnything) {
  regpipe::write_itk_transform(*this / "good.tfm", rigid(0.1, {1, 2, 3}));
  std::ofstream(*this / "bad.txt") << "1 2 3\nnot a matrix\n";
  const Image moving = regpipe::read_image(demo("moving.nii.gz"));
  regpipe::write_transform(*this / "flirt.mat", TransformFormat::Fsl, rigid(0.1, {1, 2, 3}), {&moving, &moving});
  const std::string mov = quoted(demo("moving.nii.gz")), ref = quoted(demo("reference.nii.gz"));
  const std::string out = quoted(*this / "out.nii.gz");
  const std::string good = " -t " + quoted(*this / "good.tfm");
  const struct {
    std::string args, message;
  } cases[] = {
      {"-i " + mov + " -r " + ref + " -o " + out + good + " --frobnicate", "--frobnicate"},
      {"-i " + mov + " -r " + ref + " -o " + out + good + " --interp cubic", "cubic"},
      {"-i " + mov + " -r " + ref + " -o " + out + " -t " + quoted(*this / "absent.tfm"), "absent.tfm"},
      {"-i " + mov + " -r " + ref + " -o " + out + " -t world:" + quoted(*this / "bad.txt"), "bad.txt"},
      {"-i " + mov + " -r " + ref + " -o " + out + good + " -t " + quoted(*this / "flirt.mat"),
       "flirt.mat' is FSL's: its matrix is in the voxel coordinates of the two images it relates, and needs them"},
      {"-i " + quoted(*this / "absent.nii.gz") + " -r " + ref + " -o " + out + good,
       "cannot read image '" + (*this / "absent.nii.gz").string() + "': no such file"},
      {"-i " + mov + " -r " + quoted(*this / "noref.nii.gz") + " -o " + out + good,
       "cannot read image '" + (*this / "noref.nii.gz").string() + "': no such file"},
      {"-i " + mov + " -r " + ref + " -o " + quoted(*this / "no/such/dir/out.nii.gz") + good, "no/such/dir/out.nii.gz"},
      {"-i " + mov + " -r " + ref + " -o " + quoted(*this / "out.png") + good, "out.png"},
      {"-i " + mov + " -r " + ref + " -o " + out + good + " --resampler resample.none", "resample.none: not installed"},
  };
  for (const auto& c : cases) {
    std::string output;
    EXPECT_EQ(regpipe("apply " + c.args, &output), 2) << c.args << "\n" << output;
    EXPECT_NE(output.find(c.message), std::string::npos) << c.args << "\n" << output;
    EXPECT_FALSE(fs::exists(*this / "out.nii.gz")) << c.args;
  }
  for (const auto& entry : fs::directory_iterator(dir_.path()))
    EXPECT_TRUE(entry.path().filename() == "demo" || entry.path().extension() == ".tfm" ||
                entry.path().extension() == ".txt" || entry.path().extension() == ".mat")
        << "left behind: " << entry.path();
}
