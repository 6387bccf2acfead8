// Transform files of every format: which format a file is, round trips through each, and the
// refusals, each naming the file.
#include <regpipe/host/error.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using regpipe::FslImages;
using regpipe::Image;
using regpipe::TransformFormat;
using regpipe::test::TempDir;

using regpipe::test::message_of;
using regpipe::test::max_difference;

namespace {

Image grid(std::array<uint32_t, 3> dims, double x_spacing, const Eigen::Vector3d& origin) {
  Image image;
  image.dims = dims;
  const Eigen::Matrix3d turn =
      Eigen::AngleAxisd(0.3, Eigen::Vector3d(0.2, -0.4, 1).normalized()).toRotationMatrix();
  image.voxel_to_world.topLeftCorner<3, 3>() =
      turn * Eigen::Vector3d(x_spacing, -1.2, 0.9).asDiagonal();
  image.voxel_to_world.topRightCorner<3, 1>() = origin;
  return image;  // the conventions need only the grid
}

Eigen::Matrix4d sample_transform() {
  return regpipe::params_to_matrix({0.2, -0.1, 0.3, 5.5, -6.25, 7, 1.1, 0.9, 1.05, 0.02, -0.03, 0.01},
                                   {10, -20, 30});
}

}  // namespace

TEST(TransformFile, FormatNames) {
  EXPECT_EQ(regpipe::parse_transform_format("fsl"), TransformFormat::Fsl);
  EXPECT_EQ(regpipe::parse_transform_format("itk"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::parse_transform_format("ants"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::parse_transform_format("world"), TransformFormat::World);
  EXPECT_NE(message_of([] { regpipe::parse_transform_format("flirt"); })
                .find("unknown transform format 'flirt': use fsl, itk, ants or world"),
            std::string::npos);
}

TEST(TransformFile, DetectsTheFormatFromExtensionAndContent) {
  TempDir dir;
  const Eigen::Matrix4d t = sample_transform();
  regpipe::write_fsl_mat(dir / "flirt.mat", Eigen::Matrix4d::Identity());
  regpipe::write_itk_transform(dir / "0GenericAffine.mat", t);
  regpipe::write_itk_transform(dir / "itk.txt", t);
  regpipe::write_itk_transform(dir / "itk.tfm", t);
  regpipe::write_itk_transform(dir / "itk.h5", t);
  regpipe::write_world_matrix(dir / "world.txt", t);
  std::ofstream(dir / "t.xfm") << "1 0 0 0\n";
  EXPECT_EQ(regpipe::detect_transform_format(dir / "flirt.mat"), TransformFormat::Fsl);
  EXPECT_EQ(regpipe::detect_transform_format(dir / "0GenericAffine.mat"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::detect_transform_format(dir / "itk.txt"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::detect_transform_format(dir / "itk.tfm"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::detect_transform_format(dir / "itk.h5"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::detect_transform_format(dir / "world.txt"), TransformFormat::World);
  EXPECT_NE(message_of([&] { regpipe::detect_transform_format(dir / "t.xfm"); })
                .find("t.xfm': the extension does not tell its format"),
            std::string::npos);
  EXPECT_NE(message_of([&] { regpipe::detect_transform_format(dir / "absent.mat"); })
                .find("absent.mat': no such file"),
            std::string::npos);

  EXPECT_EQ(regpipe::output_transform_format("a.tfm"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::output_transform_format("a.h5"), TransformFormat::Itk);
  EXPECT_EQ(regpipe::output_transform_format("a.txt"), TransformFormat::World);
  EXPECT_NE(message_of([] { regpipe::output_transform_format("a.mat"); })
                .find("cannot write transform 'a.mat': a .mat is FSL's text or ANTs' MATLAB binary"),
            std::string::npos);
}

TEST(TransformFile, EveryFormatRoundTrips) {
  TempDir dir;
  // Neurological moving (x mirrored in FSL's coordinates), radiological reference.
  const Image moving = grid({40, 30, 20}, -1.5, {12, -30, 8});
  const Image reference = grid({50, 44, 36}, 1.1, {-40, 20, -15});
  const FslImages images{&moving, &reference};
  const Eigen::Matrix4d t = sample_transform();
  const std::vector<std::pair<std::string, TransformFormat>> files{
      {"a.mat", TransformFormat::Fsl},   {"b.tfm", TransformFormat::Itk},
      {"c.txt", TransformFormat::Itk},   {"d.mat", TransformFormat::Itk},
      {"e.h5", TransformFormat::Itk},    {"f.hdf5", TransformFormat::Itk},
      {"g.txt", TransformFormat::World}};
  for (const auto& [name, format] : files) {
    regpipe::write_transform(dir / name, format, t, images);
    EXPECT_EQ(regpipe::detect_transform_format(dir / name), format) << name;
    // FLIRT's layout keeps ten decimals (5e-11 an entry), which its scaled-voxel coordinates
    // (up to ~100 mm here) turn into up to ~5e-9 in world terms; the others keep 17 digits.
    const double tolerance = format == TransformFormat::Fsl ? 1e-8 : 1e-9;
    EXPECT_LT(max_difference(regpipe::read_transform(dir / name, format, images), t), tolerance)
        << name;
  }
  // In FLIRT's own terms the FSL file round-trips to 1e-9: its numbers are to_fsl_matrix's
  // (ten decimals), and reading them gives a transform whose FLIRT matrix they are.
  const Eigen::Matrix4d flirt = regpipe::read_matrix_file(dir / "a.mat");
  EXPECT_LT(max_difference(flirt, regpipe::to_fsl_matrix(t, reference, moving)), 1e-10);
  EXPECT_LT(max_difference(regpipe::to_fsl_matrix(
                               regpipe::read_transform(dir / "a.mat", TransformFormat::Fsl, images),
                               reference, moving),
                           flirt),
            1e-9);
}

TEST(TransformFile, RefusalsNameTheFile) {
  TempDir dir;
  const Image image = grid({10, 10, 10}, 1, {0, 0, 0});
  regpipe::write_fsl_mat(dir / "flirt.mat", Eigen::Matrix4d::Identity());
  regpipe::write_itk_transform(dir / "ants.mat", sample_transform());
  std::ofstream(dir / "singular.txt") << "1 0 0 0\n0 0 0 0\n0 0 1 0\n0 0 0 1\n";
  const std::vector<std::pair<std::function<void()>, std::string>> cases{
      {[&] { regpipe::read_transform(dir / "flirt.mat", TransformFormat::Fsl); },
       "flirt.mat': an FSL matrix is in the voxel coordinates of the two images it relates"},
      {[&] { regpipe::read_transform(dir / "flirt.mat", TransformFormat::Fsl, {&image, nullptr}); },
       "flirt.mat': an FSL matrix"},
      {[&] { regpipe::read_transform(dir / "ants.mat", TransformFormat::Fsl, {&image, &image}); },
       "ants.mat': it is a binary file, not FSL's 4 lines of 4 numbers"},
      {[&] { regpipe::read_transform(dir / "singular.txt", TransformFormat::World); },
       "singular.txt': the world matrix is singular"},
      {[&] {
         regpipe::write_transform(dir / "out.txt", TransformFormat::World, Eigen::Matrix4d::Zero());
       },
       "cannot write transform '" + (dir / "out.txt").string() + "': the transform is singular"},
      {[&] { regpipe::write_transform(dir / "out.mat", TransformFormat::Fsl, sample_transform()); },
       "cannot write transform '" + (dir / "out.mat").string() + "': an FSL matrix"},
  };
  for (const auto& [call, expected] : cases) {
    const std::string message = message_of(call);
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(dir / "out.txt"));
  EXPECT_FALSE(fs::exists(dir / "out.mat"));
}
