// `regpipe apply` against SimpleITK's Resample: the same image, reference grid and .tfm with
// linear interpolation give the same voxels. SimpleITK's transform maps reference (fixed)
// physical points to input (moving) points, regpipe's .tfm direction. Skips without SimpleITK.
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/python.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using regpipe::test::python_lacks;
using regpipe::test::python_numbers;
using regpipe::test::run_command;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// Resamples argv[1] onto argv[2]'s grid through argv[3] (linear, background 0, float32) and
// compares with regpipe's argv[4] where the input position lies inside [0, n-1] on every axis
// (regpipe's sampling domain; ITK's linear interpolator reaches half a voxel further):
// prints the largest difference there, the number of voxels compared and the largest value.
constexpr const char* kCompare = R"(import sys
import numpy as np
import SimpleITK as sitk
moving, reference = sitk.ReadImage(sys.argv[1], sitk.sitkFloat32), sitk.ReadImage(sys.argv[2])
transform = sitk.ReadTransform(sys.argv[3])
theirs = sitk.GetArrayFromImage(sitk.Resample(moving, reference, transform, sitk.sitkLinear, 0.0, sitk.sitkFloat32))
ours = sitk.GetArrayFromImage(sitk.ReadImage(sys.argv[4], sitk.sitkFloat32))
size = moving.GetSize()
largest, compared = 0.0, 0
for k in range(reference.GetSize()[2]):
    for j in range(reference.GetSize()[1]):
        for i in range(reference.GetSize()[0]):
            point = transform.TransformPoint(reference.TransformIndexToPhysicalPoint((i, j, k)))
            index = moving.TransformPhysicalPointToContinuousIndex(point)
            if all(1e-4 < index[a] < size[a] - 1 - 1e-4 for a in range(3)):
                compared += 1
                largest = max(largest, abs(float(theirs[k, j, i]) - float(ours[k, j, i])))
print(largest, compared, float(np.abs(ours).max()))
)";

}  // namespace

TEST(ApplyInterop, SimpleItkResampleWithTheSameTfmGivesTheSameVoxels) {
  if (auto why = python_lacks("SimpleITK", "SimpleITK")) GTEST_SKIP() << *why;
  regpipe::test::TempDir dir;
  const std::string cli = quoted(regpipe::test::regpipe_cli());
  std::string out;
  ASSERT_EQ(run_command(cli + " phantom " + quoted(dir / "demo") + " --size 40 --voxel-mm 4", &out), 0) << out;
  // A rotation about all three axes, a shift and some scale, on the phantom's oblique moving grid.
  regpipe::write_itk_transform(dir / "t.tfm",
                               regpipe::params_to_matrix({0.15, -0.1, 0.2, 4.5, -3.25, 6, 1.05, 0.97, 1.02, 0.01, 0, -0.02},
                                                         {5, -10, 12}));
  ASSERT_EQ(run_command(cli + " apply -q -i " + quoted(dir / "demo" / "moving.nii.gz") + " -r " +
                            quoted(dir / "demo" / "reference.nii.gz") + " -t " + quoted(dir / "t.tfm") +
                            " --interp trilinear --datatype float32 -o " + quoted(dir / "ours.nii.gz"),
                        &out),
            0)
      << out;
  const std::vector<double> r =
      python_numbers(dir, kCompare,
                     quoted(dir / "demo" / "moving.nii.gz") + " " + quoted(dir / "demo" / "reference.nii.gz") +
                         " " + quoted(dir / "t.tfm") + " " + quoted(dir / "ours.nii.gz"));
  ASSERT_EQ(r.size(), 3u);
  std::printf("regpipe apply vs SimpleITK Resample: largest difference %.3g over %.0f voxels (values up to %.0f)\n",
              r[0], r[1], r[2]);
  EXPECT_GT(r[1], 20000);   // most of the 64000 voxels: the head, not just the border
  EXPECT_GT(r[2], 500);     // and the image has content there
  // regpipe interpolates at positions rounded to float (about 2e-6 voxel at index 40) across
  // edges of up to ~1000 per voxel, SimpleITK in double: 1.9e-3 measured, 1e-2 allowed.
  EXPECT_LT(r[0], 1e-5 * r[2]);
}
