// `regpipe transform`: conversions between every format, inversion, chains (FSL ones with their
// images), and bad input (exit status 2, the file and the problem named, no file written).
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <fstream>

namespace fs = std::filesystem;
using regpipe::FslImages;
using regpipe::Image;
using regpipe::TransformFormat;
using regpipe::test::run_command;

using regpipe::test::max_difference;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// A small image on an oblique grid; x_spacing < 0 stores it neurologically (FSL mirrors x).
Image grid_image(std::array<uint32_t, 3> dims, double x_spacing, const Eigen::Vector3d& origin,
                 double turn) {
  Image image;
  image.dims = dims;
  image.voxel_to_world.topLeftCorner<3, 3>() =
      Eigen::AngleAxisd(turn, Eigen::Vector3d(0.3, 0.1, 1).normalized()).toRotationMatrix() *
      Eigen::Vector3d(x_spacing, 1.5, 2.0).asDiagonal();
  image.voxel_to_world.topRightCorner<3, 1>() = origin;
  image.data.assign(image.voxel_count(), 1.0f);
  return image;
}

Eigen::Matrix4d affine(double angle, double shift) {
  return regpipe::params_to_matrix(
      {angle, -0.5 * angle, 0.7 * angle, shift, -2 * shift, 0.5 * shift, 1.1, 0.95, 1.02, 0.03, -0.02, 0.01},
      {5, -10, 20});
}

class TransformCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    regpipe::write_image(grid_image({20, 24, 16}, -3.0, {10, -20, 5}, 0.2), dir_ / "epi.nii.gz");
    regpipe::write_image(grid_image({30, 32, 28}, 1.0, {-15, 25, -30}, -0.1), dir_ / "t1.nii.gz");
    regpipe::write_image(grid_image({36, 40, 30}, 2.0, {-40, 60, -35}, 0.0), dir_ / "mni.nii.gz");
    // The grids as the CLI reads them (NIfTI stores them in float).
    for (const char* name : {"epi", "t1", "mni"}) images_[name] = regpipe::read_image(path(name));
  }
  fs::path operator/(const std::string& name) const { return dir_ / name; }
  fs::path path(const std::string& image) const { return dir_ / (image + ".nii.gz"); }
  FslImages fsl(const std::string& moving, const std::string& reference) const {
    return {&images_.at(moving), &images_.at(reference)};
  }
  // `regpipe transform ARGS`: its exit status, output in `out`.
  int transform(const std::string& args, std::string* out) {
    return run_command(regpipe::test::regpipe_cli().string() + " transform " + args, out);
  }
  void expect_ok(const std::string& args) {
    std::string out;
    EXPECT_EQ(transform(args, &out), 0) << args << "\n" << out;
  }
  Eigen::Matrix4d read(const std::string& name, TransformFormat format, FslImages images = {}) {
    return regpipe::read_transform(dir_ / name, format, images);
  }

  regpipe::test::TempDir dir_;
  std::map<std::string, Image> images_;
};

}  // namespace

TEST_F(TransformCliTest, ConvertsThroughEveryFormat) {
  regpipe::write_transform(*this / "a.mat", TransformFormat::Fsl, affine(0.2, 4), fsl("epi", "t1"));
  const Eigen::Matrix4d t = read("a.mat", TransformFormat::Fsl, fsl("epi", "t1"));
  const std::string src_ref = " --src " + quoted(path("epi")) + " --ref " + quoted(path("t1"));
  expect_ok(quoted(*this / "a.mat") + src_ref + " -o " + quoted(*this / "b.tfm"));
  expect_ok(quoted(*this / "b.tfm") + " -o ants:" + quoted(*this / "c.mat"));
  expect_ok(quoted(*this / "c.mat") + " -o " + quoted(*this / "d.txt"));
  expect_ok(quoted(*this / "d.txt") + " -o " + quoted(*this / "e.h5"));
  expect_ok(quoted(*this / "e.h5") + " --out-format itk -o " + quoted(*this / "f.txt"));
  expect_ok(quoted(*this / "f.txt") + src_ref + " --out-format fsl -o " + quoted(*this / "g.mat"));
  EXPECT_LT(max_difference(read("b.tfm", TransformFormat::Itk), t), 1e-9);
  EXPECT_LT(max_difference(read("c.mat", TransformFormat::Itk), t), 1e-9);
  EXPECT_LT(max_difference(read("d.txt", TransformFormat::World), t), 1e-9);
  EXPECT_LT(max_difference(read("e.h5", TransformFormat::Itk), t), 1e-9);
  EXPECT_LT(max_difference(read("f.txt", TransformFormat::Itk), t), 1e-9);
  // Back to FLIRT's own numbers.
  EXPECT_LT(max_difference(regpipe::read_matrix_file(*this / "g.mat"),
                           regpipe::read_matrix_file(*this / "a.mat")),
            1e-9);
  EXPECT_EQ(regpipe::detect_transform_format(*this / "c.mat"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::detect_transform_format(*this / "f.txt"), TransformFormat::Itk);
}

TEST_F(TransformCliTest, NamedFormatsBeatTheExtension) {
  // A world matrix and an FSL matrix under names that tell nothing, and an ITK text file
  // under .txt (which alone reads as a world matrix on output).
  const Eigen::Matrix4d t = affine(0.25, 5);
  regpipe::write_transform(*this / "w.xfm", TransformFormat::World, t);
  expect_ok("--in-format world " + quoted(*this / "w.xfm") + " -o itk:" + quoted(*this / "itk.txt"));
  EXPECT_EQ(regpipe::detect_transform_format(*this / "itk.txt"), TransformFormat::Itk);
  EXPECT_LT(max_difference(read("itk.txt", TransformFormat::Itk), t), 1e-9);
  expect_ok("world:" + quoted(*this / "w.xfm") + " --src " + quoted(path("epi")) + " --ref " +
            quoted(path("t1")) + " --out-format fsl -o " + quoted(*this / "f.xfm"));
  EXPECT_LT(max_difference(regpipe::read_matrix_file(*this / "f.xfm"),
                           regpipe::to_fsl_matrix(t, images_.at("t1"), images_.at("epi"))),
            1e-9);
}

TEST_F(TransformCliTest, InvertingTwiceGivesTheTransformBack) {
  const Eigen::Matrix4d t = affine(0.3, 7);
  regpipe::write_itk_transform(*this / "t.tfm", t);
  expect_ok(quoted(*this / "t.tfm") + " --invert -o " + quoted(*this / "inverse.tfm"));
  expect_ok(quoted(*this / "inverse.tfm") + " --invert -o " + quoted(*this / "back.tfm"));
  const Eigen::Matrix4d inverse = read("inverse.tfm", TransformFormat::Itk);
  EXPECT_LT(max_difference(inverse * t, Eigen::Matrix4d::Identity()), 1e-12);
  EXPECT_LT(max_difference(read("back.tfm", TransformFormat::Itk), t), 1e-9);

  // FSL: the inverse registers t1 onto epi, and FLIRT's matrix is the inverse matrix
  // (convert_xfm -inverse).
  regpipe::write_transform(*this / "epi2t1.mat", TransformFormat::Fsl, t, fsl("epi", "t1"));
  expect_ok(quoted(*this / "epi2t1.mat") + " --src " + quoted(path("epi")) + " --ref " +
            quoted(path("t1")) + " --invert -o fsl:" + quoted(*this / "t12epi.mat"));
  EXPECT_LT(max_difference(regpipe::read_matrix_file(*this / "t12epi.mat"),
                           regpipe::read_matrix_file(*this / "epi2t1.mat").inverse()),
            1e-9);
}

TEST_F(TransformCliTest, AChainIsTheProductInTheOrderGiven) {
  // u registers A onto B, v B onto C: the chain registers A onto C, reference C -> moving A is
  // T_u T_v, and the forward world matrices compose the other way round.
  const Eigen::Matrix4d u = affine(0.2, 3), v = affine(-0.4, 9);
  regpipe::write_itk_transform(*this / "u.tfm", u);
  regpipe::write_transform(*this / "v.txt", TransformFormat::World, v);
  expect_ok(quoted(*this / "u.tfm") + " " + quoted(*this / "v.txt") + " -o " + quoted(*this / "uv.tfm"));
  expect_ok(quoted(*this / "u.tfm") + " " + quoted(*this / "v.txt") + " -o " + quoted(*this / "uv.txt"));
  EXPECT_LT(max_difference(read("uv.tfm", TransformFormat::Itk), u * v), 1e-9);
  EXPECT_LT(max_difference(regpipe::read_matrix_file(*this / "uv.txt"),
                           regpipe::to_world_ras_forward(v) * regpipe::to_world_ras_forward(u)),
            1e-9);
}

TEST_F(TransformCliTest, FslChainWithItsImagesIsConvertXfmsConcat) {
  // EPI -> T1 -> MNI. FLIRT's matrices compose directly (T1's scaled voxels are shared):
  // convert_xfm -omat epi2mni.mat -concat t12mni.mat epi2t1.mat.
  regpipe::write_transform(*this / "epi2t1.mat", TransformFormat::Fsl, affine(0.2, 4), fsl("epi", "t1"));
  regpipe::write_transform(*this / "t12mni.mat", TransformFormat::Fsl, affine(-0.1, 6), fsl("t1", "mni"));
  // T1 is named once: as the first file's ref, it is the second file's src.
  expect_ok("fsl:" + quoted(*this / "epi2t1.mat") + ":src=" + quoted(path("epi")) + ":ref=" +
            quoted(path("t1")) + " " + quoted(*this / "t12mni.mat") + ":ref=" + quoted(path("mni")) +
            " -o fsl:" + quoted(*this / "epi2mni.mat"));
  const Eigen::Matrix4d expected = regpipe::read_matrix_file(*this / "t12mni.mat") *
                                   regpipe::read_matrix_file(*this / "epi2t1.mat");
  EXPECT_LT(max_difference(regpipe::read_matrix_file(*this / "epi2mni.mat"), expected), 1e-9);

  // The same chain with the ends given as --src / --ref, written as ANTs' affine.
  expect_ok(quoted(*this / "epi2t1.mat") + ":ref=" + quoted(path("t1")) + " " +
            quoted(*this / "t12mni.mat") + " --src " + quoted(path("epi")) + " --ref " +
            quoted(path("mni")) + " -o ants:" + quoted(*this / "epi2mni_ants.mat"));
  EXPECT_LT(max_difference(read("epi2mni_ants.mat", TransformFormat::Itk),
                           regpipe::from_fsl_matrix(expected, images_.at("mni"), images_.at("epi"))),
            1e-9);
}

TEST_F(TransformCliTest, BadInputIsRefusedWithExitStatus2AndNoFile) {
  regpipe::write_itk_transform(*this / "good.tfm", affine(0.1, 1));
  regpipe::write_itk_transform(*this / "ants.mat", affine(0.1, 1));
  regpipe::write_fsl_mat(*this / "flirt.mat", Eigen::Matrix4d::Identity());
  regpipe::write_itk_transform(*this / "singular.tfm", Eigen::Matrix4d::Zero());
  std::ofstream(*this / "three.mat") << "1 0 0\n0 1 0\n0 0 1\n";
  std::ofstream(*this / "short.txt") << "1 0 0 0\n0 1 0 0\n0 0 1 0\n";
  std::ofstream(*this / "row.txt") << "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 1 1\n";
  std::ofstream(*this / "t.xfm") << "1 0 0 0\n";
  const std::string epi = quoted(path("epi")), t1 = quoted(path("t1")), mni = quoted(path("mni"));
  auto in = [&](const std::string& name) { return quoted(*this / name); };
  struct Case {
    std::string args, expected;
  };
  const std::vector<Case> cases{
      {in("good.tfm") + " --bogus", "--bogus"},
      {in("absent.tfm"), "absent.tfm': no such file"},
      {in("three.mat") + " --src " + epi + " --ref " + t1, "three.mat': line 1 has 3 numbers"},
      {in("short.txt"), "short.txt': found 3 lines of numbers"},
      {in("row.txt"), "row.txt': the last row is '0 0 1 1', an affine matrix has 0 0 0 1"},
      {in("singular.tfm") + " --invert", "the transform of '" + (*this / "singular.tfm").string() + "' is singular and cannot be inverted"},
      {in("flirt.mat"), "flirt.mat' is FSL's: its matrix is in the voxel coordinates of the two images"},
      {in("flirt.mat") + " --src " + epi, "flirt.mat' is FSL's"},
      {in("good.tfm") + " --out-format fsl", "out.tfm' is FSL's: its matrix is in the voxel coordinates of the two images it relates, and writing it needs --src and --ref"},
      {in("good.tfm") + " --in-format flirt", "--in-format: flirt not in {fsl,itk,ants,world}"},
      {"fsl:" + in("ants.mat") + " --src " + epi + " --ref " + t1, "ants.mat': it is a binary file"},
      {in("t.xfm"), "t.xfm': the extension does not tell its format"},
      {in("flirt.mat") + ":src=" + epi + ":to=" + t1, "unknown option 'to="},
      {in("flirt.mat") + ":src=" + epi + ":ref=" + t1 + " --src " + mni, "two images for one space of the chain"},
      {in("flirt.mat") + ":src=" + in("absent.nii.gz") + ":ref=" + t1, "cannot read image '" + (*this / "absent.nii.gz").string() + "': no such file"},
  };
  for (const Case& c : cases) {
    std::string out;
    EXPECT_EQ(transform(c.args + " -o " + quoted(*this / "out.tfm"), &out), 2) << c.args << "\n" << out;
    EXPECT_NE(out.find(c.expected), std::string::npos) << c.args << "\n" << out;
    EXPECT_FALSE(fs::exists(*this / "out.tfm")) << c.args;
  }
  std::string out;
  EXPECT_EQ(transform(in("good.tfm") + " -o " + in("out.mat"), &out), 2);
  EXPECT_NE(out.find("out.mat': a .mat is FSL's text or ANTs' MATLAB binary; name the format"),
            std::string::npos)
      << out;
  EXPECT_EQ(transform(in("good.tfm") + " -o " + in("no_folder/out.tfm"), &out), 2);
  EXPECT_NE(out.find("no_folder' does not exist"), std::string::npos) << out;
  // Nothing but the files made above (no temporaries).
  for (const auto& entry : fs::directory_iterator(dir_.path()))
    EXPECT_EQ(entry.path().filename().string().find(".partial"), std::string::npos) << entry.path();
}
