// `regpipe run` places images by the NIfTI standard's matrix and writes the registered image
// with the reference's header, as FLIRT does: on an sform-edited pair the transforms are in
// the sform world (where FSL and nibabel see the images), and an MNI reference's output stays
// in MNI space (code 4).
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/raw_nifti.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using regpipe::test::RawNifti;
using regpipe::test::run_command;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }
std::string cli() { return quoted(regpipe::test::regpipe_cli()); }

// The phantom's reference voxels in a file whose qform (code 1) is the phantom's 4 mm grid and
// whose sform (code 4) is that grid moved `sform_shift_x` mm along x (RAS).
void write_edited(const regpipe::Image& phantom, float sform_shift_x, const fs::path& path) {
  RawNifti n;
  n.dim = {int16_t(phantom.dims[0]), int16_t(phantom.dims[1]), int16_t(phantom.dims[2])};
  for (int a = 0; a < 3; ++a) n.pixdim[a] = 4.0f;
  n.qform_code = 1;
  n.qoffset[0] = -80.0f, n.qoffset[1] = -80.0f, n.qoffset[2] = -60.0f;
  for (int r = 0; r < 3; ++r) {
    n.srow[r][r] = 4.0f;
    n.srow[r][3] = n.qoffset[r] + (r == 0 ? sform_shift_x : 0.0f);
  }
  n.sform_code = 4;
  n.descrip = "edited sform";
  n.cal_min = 0.0f, n.cal_max = 700.0f;
  const char* bytes = reinterpret_cast<const char*>(phantom.data.data());
  n.payload.assign(bytes, bytes + phantom.data.size() * sizeof(float));
  n.write(path);
}

// Registers `moving` to `reference` (cpu.cr, 6 DOF) into dir/out.
void register_pair(const fs::path& dir, const fs::path& reference, const fs::path& moving,
                   const std::string& levels_mm, std::string* out) {
  regpipe::write_text_atomically(dir / "pipeline.yaml", "inputs:\n  reference: " + reference.string() +
                                                            "\n  moving: " + moving.string() +
                                                            "\nregistration:\n  dof: 6\n  levels_mm: " + levels_mm +
                                                            "\n  cost: {plugin: cpu.cr}\noutputs:\n  dir: out\n");
  ASSERT_EQ(run_command(cli() + " run --quiet " + quoted(dir / "pipeline.yaml"), out), 0) << *out;
}

TEST(HeaderFidelity, AnSformEditedPairIsRegisteredInTheSformWorldAndKeepsTheHeader) {
  regpipe::test::TempDir dir;
  std::string out;
  ASSERT_EQ(run_command(cli() + " phantom " + quoted(dir / "demo") + " --size 40 --voxel-mm 4", &out), 0) << out;
  const regpipe::Image phantom = regpipe::read_image(dir / "demo" / "reference.nii.gz");
  // One image, two headers: the qforms agree, the sforms are 5 mm apart. Placed by its qform
  // (as ITK alone would) the pair is aligned; by its sform, the moving image is 5 mm to the right.
  write_edited(phantom, 10.0f, dir / "reference.nii");
  write_edited(phantom, 15.0f, dir / "moving.nii");
  register_pair(dir.path(), dir / "reference.nii", dir / "moving.nii", "[8, 4]", &out);
  EXPECT_NE(out.find("sform and qform place the image up to 10 mm apart"), std::string::npos) << out;

  // transform_world.txt maps moving RAS world to reference RAS world: 5 mm back along x.
  const Eigen::Matrix4d world = regpipe::read_matrix_file(dir / "out" / "transform_world.txt");
  Eigen::Matrix4d expected = Eigen::Matrix4d::Identity();
  expected(0, 3) = -5.0;
  EXPECT_LT((world - expected).cwiseAbs().maxCoeff(), 0.05) << world;

  const RawNifti reference = RawNifti::read_header(dir / "reference.nii");
  const RawNifti registered = RawNifti::read_header(dir / "out" / "registered.nii.gz");
  EXPECT_EQ(registered.qform_code, 1);
  EXPECT_EQ(registered.sform_code, 4);
  EXPECT_EQ(registered.descrip, "edited sform");
  EXPECT_EQ(registered.cal_max, 700.0f);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(registered.qoffset[r], reference.qoffset[r]);
    for (int c = 0; c < 4; ++c) EXPECT_EQ(registered.srow[r][c], reference.srow[r][c]);
  }
}

TEST(HeaderFidelity, AnMniReferenceGivesAnOutputInMniSpace) {
  REGPIPE_REQUIRE_DATA(mni, "MNI152_T1_2mm.nii.gz");
  regpipe::test::TempDir dir;
  std::string out;
  // The template registered to itself, coarsely: the point is the header of what is written.
  register_pair(dir.path(), mni, mni, "[8]", &out);
  const RawNifti template_header = RawNifti::read_header(mni);
  const RawNifti registered = RawNifti::read_header(dir / "out" / "registered.nii.gz");
  EXPECT_EQ(template_header.sform_code, 4);
  EXPECT_EQ(registered.qform_code, 4);
  EXPECT_EQ(registered.sform_code, 4);
  EXPECT_EQ(registered.descrip, template_header.descrip);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(registered.srow[r][c], template_header.srow[r][c]);
}

}  // namespace
