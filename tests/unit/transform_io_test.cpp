// FSL .mat and world RAS conventions (hand-derived cases, derivations in docs/coordinates.md)
// and their text files; ITK's files are in itk_transform_io_test.cpp.
#include <regpipe/host/error.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

namespace fs = std::filesystem;
using regpipe::Image;
using regpipe::UserError;
using regpipe::test::TempDir;

using regpipe::test::message_of;
using regpipe::test::max_difference;

namespace {

Image geometry(std::array<uint32_t, 3> dims, const Eigen::Matrix3d& linear,
               const Eigen::Vector3d& origin) {
  Image image;
  image.dims = dims;
  image.voxel_to_world.topLeftCorner<3, 3>() = linear;
  image.voxel_to_world.topRightCorner<3, 1>() = origin;
  return image;  // no voxels: the conventions need only the grid
}

Eigen::Matrix3d diagonal(double x, double y, double z) {
  return Eigen::Vector3d(x, y, z).asDiagonal();
}

Eigen::Matrix4d translation(double x, double y, double z) {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topRightCorner<3, 1>() = Eigen::Vector3d(x, y, z);
  return m;
}

std::string contents(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(TransformIo, FslTranslationOnRadiologicalImages) {
  // MNI152 2 mm grid: RAS diag(-2,2,2), i.e. LPS diag(2,-2,2); det < 0, so no x mirror and
  // scaled = 2 * index. p_mov = p_ref + t gives scaled_ref = scaled_mov + (-tx, ty, -tz).
  const Image mni = geometry({91, 109, 91}, diagonal(2, -2, 2), {-90, 126, -72});
  const Eigen::Matrix4d fsl = regpipe::to_fsl_matrix(translation(3, -4, 5), mni, mni);
  EXPECT_LT(max_difference(fsl, translation(-3, -4, -5)), 1e-12) << fsl;
}

TEST(TransformIo, FslMirrorsXOfNeurologicalImages) {
  // Same world grid start, identity transform, widths 10 and 12. Neurological (LPS x voxel
  // axis negative, det > 0): x_scaled = (nx-1-i)*dx, so the two differ by (12-10)*2 mm.
  const Image ref = geometry({10, 6, 6}, diagonal(-2, -2, 2), {0, 0, 0});
  const Image mov = geometry({12, 6, 6}, diagonal(-2, -2, 2), {0, 0, 0});
  EXPECT_LT(max_difference(regpipe::to_fsl_matrix(Eigen::Matrix4d::Identity(), ref, mov),
                           translation(-4, 0, 0)),
            1e-12);
  // The same grids stored radiologically: no mirror, the identity.
  const Image ref_radiological = geometry({10, 6, 6}, diagonal(2, -2, 2), {0, 0, 0});
  const Image mov_radiological = geometry({12, 6, 6}, diagonal(2, -2, 2), {0, 0, 0});
  EXPECT_LT(max_difference(regpipe::to_fsl_matrix(Eigen::Matrix4d::Identity(), ref_radiological,
                                                  mov_radiological),
                           Eigen::Matrix4d::Identity()),
            1e-12);
}

TEST(TransformIo, MirroredStorageOfOneGridIsTheFslIdentity) {
  // The moving file stores the reference's grid with x reversed (voxel i at world x = 7-i).
  // FSL's mirror exists to make exactly this the identity.
  const Image ref = geometry({8, 5, 4}, diagonal(1, -1, 1), {0, 0, 0});
  const Image mov = geometry({8, 5, 4}, diagonal(-1, -1, 1), {7, 0, 0});
  EXPECT_LT(max_difference(regpipe::to_fsl_matrix(Eigen::Matrix4d::Identity(), ref, mov),
                           Eigen::Matrix4d::Identity()),
            1e-12);
}

TEST(TransformIo, FslRoundTripOnObliqueGrids) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> angle(-3, 3), small(-0.3, 0.3), shift(-40, 40),
      size(0.5, 3);
  for (int trial = 0; trial < 200; ++trial) {
    auto random_grid = [&](bool mirrored) {
      const Eigen::Matrix3d r =
          Eigen::AngleAxisd(angle(rng), Eigen::Vector3d(small(rng), small(rng), 1).normalized())
              .toRotationMatrix();
      return geometry({uint32_t(20 + trial % 7), 30, 17},
                      r * diagonal(mirrored ? -size(rng) : size(rng), size(rng), size(rng)),
                      {shift(rng), shift(rng), shift(rng)});
    };
    const Image ref = random_grid(trial % 2 == 0), mov = random_grid(trial % 3 == 0);
    const regpipe::AffineParams p{small(rng),     small(rng), small(rng),     shift(rng),
                                  shift(rng),     shift(rng), 1 + small(rng), 1 + small(rng),
                                  1 + small(rng), small(rng), small(rng),     small(rng)};
    const Eigen::Matrix4d t = regpipe::params_to_matrix(p, {shift(rng), shift(rng), shift(rng)});
    const Eigen::Matrix4d back =
        regpipe::from_fsl_matrix(regpipe::to_fsl_matrix(t, ref, mov), ref, mov);
    ASSERT_LT(max_difference(back, t), 1e-9) << trial;
  }
}

TEST(TransformIo, WorldRasForwardIsTheInverseInRas) {
  // ref -> mov adds (1,2,3) in LPS; forward (mov -> ref) subtracts it: (-1,-2,-3) LPS is
  // (1,2,-3) RAS.
  EXPECT_LT(
      max_difference(regpipe::to_world_ras_forward(translation(1, 2, 3)), translation(1, 2, -3)),
      1e-15);
  // A turn about z is the same turn in RAS (LPS -> RAS is a half turn about z).
  const Eigen::Matrix4d turn =
      regpipe::rigid_about({0, 0, 1}, 0.4, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero());
  const Eigen::Matrix4d back_turn =
      regpipe::rigid_about({0, 0, 1}, -0.4, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero());
  EXPECT_LT(max_difference(regpipe::to_world_ras_forward(turn), back_turn), 1e-15);

  const Eigen::Matrix4d t = regpipe::params_to_matrix(
      {0.2, -0.1, 0.3, 5, -6, 7, 1.1, 0.9, 1.05, 0.02, -0.03, 0.01}, {1, 2, 3});
  EXPECT_LT(max_difference(regpipe::from_world_ras_forward(regpipe::to_world_ras_forward(t)), t),
            1e-12);
}

TEST(TransformIo, FslMatFileHasFlirtLayout) {
  TempDir dir;
  Eigen::Matrix4d m = translation(-3, 0.5, 12.25);
  m(0, 1) = -0.125;
  regpipe::write_fsl_mat(dir / "a.mat", m);
  EXPECT_EQ(contents(dir / "a.mat"),
            "1.0000000000  -0.1250000000  0.0000000000  -3.0000000000  \n"
            "0.0000000000  1.0000000000  0.0000000000  0.5000000000  \n"
            "0.0000000000  0.0000000000  1.0000000000  12.2500000000  \n"
            "0.0000000000  0.0000000000  0.0000000000  1.0000000000  \n");
  EXPECT_EQ(regpipe::read_matrix_file(dir / "a.mat"), m);
}

TEST(TransformIo, WorldMatrixFileKeepsFullPrecision) {
  TempDir dir;
  const Eigen::Matrix4d m = regpipe::params_to_matrix(
      {0.123456789012345, -1.1, 2.9, 1.0 / 3.0, -2e-7, 1e5 / 7.0, 1.1, 0.9, 1.05, 0.02, 0, 0},
      {0.1, 0.2, 0.3});
  regpipe::write_world_matrix(dir / "w.txt", m);
  EXPECT_EQ(regpipe::read_matrix_file(dir / "w.txt"), m);  // bit for bit
}

TEST(TransformIo, BadFilesAreUserErrorsNamingTheProblem) {
  TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  struct Case {
    std::function<void()> read;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[&] { regpipe::read_matrix_file(dir / "absent.mat"); }, "absent.mat': no such file"},
      {[&] { regpipe::read_matrix_file(write("short.mat", "1 0 0 0\n0 1 0 0\n0 0 1 0\n")); },
       "found 3 lines of numbers"},
      {[&] { regpipe::read_matrix_file(write("three.mat", "1 0 0\n")); }, "line 1 has 3 numbers"},
      {[&] { regpipe::read_matrix_file(write("word.mat", "1 0 0 0\n0 one 0 0\n")); },
       "line 2: 'one' is not a finite number"},
      {[&] { regpipe::read_matrix_file(write("row.mat", "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 1 1\n")); },
       "an affine matrix has 0 0 0 1"},
  };
  for (const auto& c : cases) {
    const std::string message = message_of(c.read);
    EXPECT_NE(message.find("cannot read transform '" + dir.path().string()), std::string::npos)
        << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}
