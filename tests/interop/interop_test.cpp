// regpipe's transform files read by the ecosystem's own readers, and theirs by regpipe:
// SimpleITK (ITK 5.4's transform IO: .tfm and ANTs' binary .mat) and fslpy (FLIRT's matrix
// convention, fsl.transform.flirt). Each test skips, saying why, when python3 lacks the module.
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/python.hpp"
#include "support/test_support.hpp"

#include <Eigen/Dense>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using regpipe::TransformFormat;
using regpipe::test::python_lacks;
using regpipe::test::python_numbers;
using regpipe::test::run_command;
using regpipe::test::TempDir;

using regpipe::test::max_difference;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

Eigen::Matrix4d matrix_of(const std::vector<double>& numbers, size_t first) {
  Eigen::Matrix4d m;
  for (int i = 0; i < 16; ++i) m(i / 4, i % 4) = numbers.at(first + size_t(i));
  return m;
}

Eigen::Matrix4d sample_transform() {
  return regpipe::params_to_matrix({0.2, -0.1, 0.3, 5.5, -6.25, 7, 1.1, 0.9, 1.05, 0.02, -0.03, 0.01},
                                   {10, -20, 30});
}

// The 4x4 a SimpleITK transform applies, from TransformPoint of the origin and the unit points,
// then its parameters and fixed parameters.
constexpr const char* kSitkRead = R"(import sys
import SimpleITK as sitk
t = sitk.ReadTransform(sys.argv[1])
origin = t.TransformPoint((0.0, 0.0, 0.0))
units = [t.TransformPoint(tuple(1.0 if j == i else 0.0 for j in range(3))) for i in range(3)]
rows = [[units[c][r] - origin[r] for c in range(3)] + [origin[r]] for r in range(3)] + [[0, 0, 0, 1]]
print(' '.join('%.17g' % v for row in rows for v in row))
print(' '.join('%.17g' % v for v in t.GetParameters() + t.GetFixedParameters()))
)";

// SimpleITK writes rigid and similarity transforms with a centre; prints each one's 4x4.
constexpr const char* kSitkWrite = R"(import sys
import SimpleITK as sitk
euler = sitk.Euler3DTransform((12.0, -7.0, 30.0), 0.1, -0.2, 0.3, (3.5, -1.25, 8.0))
similarity = sitk.Similarity3DTransform(1.3, (1.0, -2.0, 0.5), 0.4, (3.5, -1.25, 8.0), (12.0, -7.0, 30.0))
for t, name in ((euler, 'euler'), (similarity, 'similarity')):
    for extension in ('.tfm', '.mat'):
        sitk.WriteTransform(t, sys.argv[1] + '/' + name + extension)
    origin = t.TransformPoint((0.0, 0.0, 0.0))
    units = [t.TransformPoint(tuple(1.0 if j == i else 0.0 for j in range(3))) for i in range(3)]
    rows = [[units[c][r] - origin[r] for c in range(3)] + [origin[r]] for r in range(3)] + [[0, 0, 0, 1]]
    print(' '.join('%.17g' % v for row in rows for v in row))
)";

// fslpy's world (RAS) matrix of a FLIRT matrix between two images.
constexpr const char* kFslpyFromFlirt = R"(import sys
import numpy as np
from fsl.data.image import Image
from fsl.transform.flirt import fromFlirt
flirt, src, ref = sys.argv[1:4]
print(' '.join('%.17g' % v for v in fromFlirt(np.loadtxt(flirt), Image(src), Image(ref), 'world', 'world').ravel()))
)";

// fslpy's reading of a FLIRT matrix as a world (RAS) matrix, and its FLIRT matrix of a world one.
constexpr const char* kFslpy = R"(import sys
import numpy as np
from fsl.data.image import Image
from fsl.transform.flirt import fromFlirt, toFlirt
flirt, world, src, ref = sys.argv[1:5]
src, ref = Image(src), Image(ref)
from_flirt = fromFlirt(np.loadtxt(flirt), src, ref, 'world', 'world')
to_flirt = toFlirt(np.loadtxt(world), src, ref, 'world', 'world')
print(' '.join('%.17g' % v for v in np.concatenate([from_flirt.ravel(), to_flirt.ravel()])))
)";

}  // namespace

TEST(Interop, SimpleItkReadsRegpipesItkAndAntsFiles) {
  if (auto why = python_lacks("SimpleITK", "SimpleITK")) GTEST_SKIP() << *why;
  TempDir dir;
  const Eigen::Matrix4d t = sample_transform();
  for (const char* name : {"transform.tfm", "0GenericAffine.mat"}) {
    regpipe::write_itk_transform(dir / name, t);
    const std::vector<double> numbers = python_numbers(dir, kSitkRead, quoted(dir / name));
    ASSERT_EQ(numbers.size(), 16u + 12u + 3u) << name;
    EXPECT_LT(max_difference(matrix_of(numbers, 0), t), 1e-9) << name;
    // The parameters themselves: A row by row, the translation, a zero centre.
    for (int i = 0; i < 9; ++i) EXPECT_NEAR(numbers[16 + size_t(i)], t(i / 3, i % 3), 1e-12) << name;
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(numbers[25 + size_t(i)], t(i, 3), 1e-12) << name;
      EXPECT_EQ(numbers[28 + size_t(i)], 0.0) << name;
    }
  }
}

TEST(Interop, RegpipeReadsSimpleItksCentredTransforms) {
  if (auto why = python_lacks("SimpleITK", "SimpleITK")) GTEST_SKIP() << *why;
  TempDir dir;
  const std::vector<double> numbers = python_numbers(dir, kSitkWrite, quoted(dir.path()));
  ASSERT_EQ(numbers.size(), 32u);
  for (const auto& [name, first] : {std::pair{"euler", 0}, std::pair{"similarity", 16}})
    for (const char* extension : {".tfm", ".mat"}) {
      const fs::path path = dir / (std::string(name) + extension);
      EXPECT_LT(max_difference(regpipe::read_itk_transform(path), matrix_of(numbers, size_t(first))),
                1e-9)
          << path;
    }
}

TEST(Interop, FslpyAgreesOnFlirtMatrices) {
  if (auto why = python_lacks("fsl.transform.flirt", "fslpy")) GTEST_SKIP() << *why;
  TempDir dir;
  // Exact grids (binary fractions, axes permuted) so that NIfTI's float header stores them
  // exactly for both readers; the moving one neurological (FLIRT mirrors its x), the reference
  // radiological.
  regpipe::Image moving, reference;
  moving.dims = {20, 24, 16};
  moving.voxel_to_world.topLeftCorner<3, 3>() << 0, 0, -2.5, -1.5, 0, 0, 0, 2, 0;
  moving.voxel_to_world.topRightCorner<3, 1>() = Eigen::Vector3d(10, -20, 5.5);
  reference.dims = {30, 32, 28};
  reference.voxel_to_world.topLeftCorner<3, 3>() = Eigen::Vector3d(1.25, -1, 1.5).asDiagonal();
  reference.voxel_to_world.topRightCorner<3, 1>() = Eigen::Vector3d(-15, 25, -30);
  for (regpipe::Image* image : {&moving, &reference}) image->data.assign(image->voxel_count(), 1.0f);
  ASSERT_GT((moving.voxel_to_world.topLeftCorner<3, 3>().determinant()), 0.0);
  ASSERT_LT((reference.voxel_to_world.topLeftCorner<3, 3>().determinant()), 0.0);
  regpipe::write_image(moving, dir / "moving.nii.gz");
  regpipe::write_image(reference, dir / "reference.nii.gz");

  // regpipe's FLIRT matrix of a world matrix, and its world matrix of that FLIRT matrix.
  regpipe::write_transform(dir / "world.txt", TransformFormat::World, sample_transform());
  std::string out;
  const std::string images =
      " --src " + quoted(dir / "moving.nii.gz") + " --ref " + quoted(dir / "reference.nii.gz");
  ASSERT_EQ(run_command(regpipe::test::regpipe_cli().string() + " transform " +
                            quoted(dir / "world.txt") + images + " -o fsl:" + quoted(dir / "flirt.mat"),
                        &out),
            0)
      << out;
  ASSERT_EQ(run_command(regpipe::test::regpipe_cli().string() + " transform " +
                            quoted(dir / "flirt.mat") + images + " -o " + quoted(dir / "back.txt"),
                        &out),
            0)
      << out;

  const std::vector<double> numbers =
      python_numbers(dir, kFslpy,
                     quoted(dir / "flirt.mat") + " " + quoted(dir / "world.txt") + " " +
                         quoted(dir / "moving.nii.gz") + " " + quoted(dir / "reference.nii.gz"));
  ASSERT_EQ(numbers.size(), 32u);
  // Both read the same ten-decimal FLIRT file into the same world matrix...
  EXPECT_LT(max_difference(matrix_of(numbers, 0), regpipe::read_matrix_file(dir / "back.txt")), 1e-9);
  // ...and make the same FLIRT matrix of the world one (regpipe's printed with ten decimals).
  EXPECT_LT(max_difference(matrix_of(numbers, 16), regpipe::read_matrix_file(dir / "flirt.mat")), 1e-9);
}

TEST(Interop, FslpyReadsARegistrationsFlirtMatrixAsItsWorldMatrix) {
  if (auto why = python_lacks("fsl.transform.flirt", "fslpy")) GTEST_SKIP() << *why;
  TempDir dir;
  const std::string cli = regpipe::test::regpipe_cli().string();
  std::string out;
  ASSERT_EQ(run_command(cli + " phantom " + quoted(dir / "demo") + " --size 32 --voxel-mm 4", &out), 0)
      << out;
  ASSERT_EQ(run_command(cli + " run " + quoted(dir / "demo" / "pipeline.yaml") +
                            " --set registration.cost.plugin=cpu.cr --quiet",
                        &out),
            0)
      << out;
  const fs::path result = dir / "demo" / "result";
  const std::vector<double> numbers = python_numbers(
      dir, kFslpyFromFlirt,
      quoted(result / "transform.mat") + " " + quoted(dir / "demo" / "moving.nii.gz") + " " +
          quoted(dir / "demo" / "reference.nii.gz"));
  ASSERT_EQ(numbers.size(), 16u);
  // 1e-5: transform.mat keeps ten decimals, and the phantom's oblique moving header is float
  // (nibabel and ITK derive the grid from it in their own ways); 1.1e-6 measured.
  EXPECT_LT(max_difference(matrix_of(numbers, 0), regpipe::read_matrix_file(result / "transform_world.txt")),
            1e-5);
}
