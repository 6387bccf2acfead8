// regpipe's NIfTI placement and output headers as nibabel (the reader FSL-style python
// pipelines use) sees them: a pair whose sforms were edited is registered in nibabel's world,
// and the registered image has the reference's affine and codes. Skips without nibabel.
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

// nibabel writes the phantom's reference voxels twice: qforms (code 1) equal, sforms (code 4)
// 10 and 15 mm along x from them, as after an sform-only edit.
constexpr const char* kMakePair = R"(import sys, nibabel as nib, numpy as np
src = nib.load(sys.argv[1])
data = np.asarray(src.dataobj, dtype=np.float32)
for name, shift in (('reference.nii.gz', 10.0), ('moving.nii.gz', 15.0)):
    image = nib.Nifti1Image(data, None)
    image.set_qform(src.affine, code=1)
    sform = src.affine.copy()
    sform[0, 3] += shift
    image.set_sform(sform, code=4)
    image.header['descrip'] = b'edited by nibabel'
    nib.save(image, sys.argv[2] + '/' + name)
)";

// Prints: the largest difference between the registered image's and the reference's affines,
// the registered image's qform and sform codes, and the largest difference between
// transform_world.txt and the truth nibabel implies (same voxels: A_ref A_mov^-1).
constexpr const char* kCheck = R"(import sys, nibabel as nib, numpy as np
d = sys.argv[1]
ref, mov = nib.load(d + '/reference.nii.gz'), nib.load(d + '/moving.nii.gz')
out = nib.load(d + '/out/registered.nii.gz')
world = np.loadtxt(d + '/out/transform_world.txt')
print(np.abs(out.affine - ref.affine).max())
print(int(out.header['qform_code']), int(out.header['sform_code']))
print(np.abs(world - ref.affine @ np.linalg.inv(mov.affine)).max())
)";

TEST(NiftiInterop, NibabelSeesTheSformEditedPairRegisteredAndTheReferenceHeaderKept) {
  if (auto why = python_lacks("nibabel", "nibabel (Debian: python3-nibabel)")) GTEST_SKIP() << *why;
  regpipe::test::TempDir dir;
  const std::string cli = quoted(regpipe::test::regpipe_cli());
  std::string out;
  ASSERT_EQ(run_command(cli + " phantom " + quoted(dir / "demo") + " --size 40 --voxel-mm 4", &out), 0) << out;
  ASSERT_TRUE(python_numbers(dir, kMakePair, quoted(dir / "demo" / "reference.nii.gz") + " " + quoted(dir.path())).empty());
  ASSERT_EQ(run_command(cli + " run -q " + quoted(dir / "demo" / "pipeline.yaml") +
                            " --set registration.cost.plugin=cpu.cr --set registration.dof=6" +
                            " --set inputs.reference=" + quoted(dir / "reference.nii.gz") +
                            " --set inputs.moving=" + quoted(dir / "moving.nii.gz") +
                            " --set outputs.dir=" + quoted(dir / "out") + " --set outputs.report=false",
                        &out),
            0)
      << out;
  const std::vector<double> v = python_numbers(dir, kCheck, quoted(dir.path()));
  ASSERT_EQ(v.size(), 4u);
  EXPECT_LT(v[0], 1e-4) << "registered image's affine vs the reference's";
  EXPECT_EQ(v[1], 1.0) << "qform_code";
  EXPECT_EQ(v[2], 4.0) << "sform_code";
  // 5 mm is what nibabel's world says; the qform world would say 0.
  EXPECT_LT(v[3], 0.05) << "transform_world.txt vs nibabel's A_ref A_mov^-1";
}

}  // namespace
