// NIfTI header fidelity: which matrix places a file (the sform when sform_code > 0, as the
// NIfTI standard, FSL and nibabel say; ITK 5.2 alone takes the qform), and what a written image
// carries over (FLIRT writes its output with the reference's header). Files are made and
// checked byte by byte with RawNifti, independently of niftilib.
#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>

#include "support/raw_nifti.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cstring>

namespace fs = std::filesystem;
using regpipe::Image;
using regpipe::read_image;
using regpipe::write_image;
using regpipe::test::RawNifti;
using regpipe::test::TempDir;

namespace {

Eigen::Matrix4d ras_to_lps(const Eigen::Matrix4d& ras) { return Eigen::Vector4d(-1, -1, 1, 1).asDiagonal() * ras; }

Eigen::Matrix4d srow_matrix(const RawNifti& n) {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) m(r, c) = n.srow[r][c];
  return m;
}

// A 6x5x4 float image whose qform (code 1, a 30 degree rotation about z, 2 x 2.5 x 3 mm) and
// sform (code 4, MNI) disagree: the sform is the qform moved 10 mm along x, as after an
// sform-only edit.
RawNifti disagreeing_forms() {
  RawNifti n;
  n.dim = {6, 5, 4};
  n.pixdim[0] = 2.0f, n.pixdim[1] = 2.5f, n.pixdim[2] = 3.0f;
  const double half = 0.5 * 30.0 * M_PI / 180.0;  // quaternion (cos h, 0, 0, sin h)
  n.quatern[2] = float(std::sin(half));
  n.qoffset[0] = 12.0f, n.qoffset[1] = -20.0f, n.qoffset[2] = 7.5f;
  n.qform_code = 1;
  const Eigen::Matrix3d r = Eigen::AngleAxisd(2.0 * half, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  for (int row = 0; row < 3; ++row) {
    for (int c = 0; c < 3; ++c) n.srow[row][c] = float(r(row, c) * n.pixdim[c]);
    n.srow[row][3] = n.qoffset[row] + (row == 0 ? 10.0f : 0.0f);
  }
  n.sform_code = 4;
  n.descrip = "sform edited by hand";
  n.xyzt_units = 2 | 8;  // mm, s
  n.cal_min = 5.0f, n.cal_max = 90.0f;
  std::vector<float> values(120);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i);
  const char* bytes = reinterpret_cast<const char*>(values.data());
  n.payload.assign(bytes, bytes + values.size() * sizeof(float));
  return n;
}

TEST(NiftiHeader, TheSformPlacesTheImageWhenItsCodeIsSet) {
  TempDir dir;
  const RawNifti n = disagreeing_forms();
  n.write(dir / "edited.nii");
  const Image image = read_image(dir / "edited.nii");
  EXPECT_LT((image.voxel_to_world - ras_to_lps(srow_matrix(n))).cwiseAbs().maxCoeff(), 1e-5);
  ASSERT_TRUE(image.nifti.has_value());
  EXPECT_EQ(image.nifti->qform_code, 1);
  EXPECT_EQ(image.nifti->sform_code, 4);
  EXPECT_EQ(image.nifti->descrip, "sform edited by hand");
  // The qform's placement is kept too: 10 mm from the sform's along x.
  EXPECT_NEAR(image.nifti->sform_ras(0, 3) - image.nifti->qform_ras(0, 3), 10.0, 1e-5);
}

TEST(NiftiHeader, TheQformPlacesTheImageWithoutAnSform) {
  TempDir dir;
  RawNifti n = disagreeing_forms();
  n.sform_code = 0;
  n.write(dir / "qform_only.nii");
  const Image image = read_image(dir / "qform_only.nii");
  Eigen::Matrix4d qform = srow_matrix(n);
  qform(0, 3) -= 10.0;  // the sform was the qform moved 10 mm
  EXPECT_LT((image.voxel_to_world - ras_to_lps(qform)).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(NiftiHeader, AnImageWrittenOnItsOwnGridKeepsEveryCarriedField) {
  TempDir dir;
  const RawNifti n = disagreeing_forms();
  n.write(dir / "edited.nii");
  const Image image = read_image(dir / "edited.nii");
  for (const char* name : {"out.nii.gz", "out.nii"}) {
    write_image(image, dir / name, regpipe::VoxelType::int16);
    const RawNifti w = RawNifti::read_header(dir / name);
    EXPECT_EQ(w.qform_code, 1) << name;
    EXPECT_EQ(w.sform_code, 4) << name;
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(w.quatern[i], n.quatern[i]) << name;
      EXPECT_EQ(w.qoffset[i], n.qoffset[i]) << name;
      EXPECT_EQ(w.pixdim[i], n.pixdim[i]) << name;
      for (int c = 0; c < 4; ++c) EXPECT_EQ(w.srow[i][c], n.srow[i][c]) << name;
    }
    EXPECT_EQ(w.qfac, n.qfac) << name;
    EXPECT_EQ(w.descrip, n.descrip) << name;
    EXPECT_EQ(w.xyzt_units, n.xyzt_units) << name;
    EXPECT_EQ(w.cal_min, n.cal_min) << name;
    EXPECT_EQ(w.cal_max, n.cal_max) << name;
    EXPECT_EQ(w.datatype, 4) << name;  // int16, as asked
    const Image back = read_image(dir / name);
    EXPECT_EQ(back.data, image.data) << name;
    EXPECT_LT((back.voxel_to_world - image.voxel_to_world).cwiseAbs().maxCoeff(), 1e-5) << name;
  }
}

TEST(NiftiHeader, OnAnotherGridBothFormsDescribeThatGrid) {
  TempDir dir;
  disagreeing_forms().write(dir / "edited.nii");
  Image image = read_image(dir / "edited.nii");
  // The header's codes and text, but a 1.5 mm grid moved elsewhere (as -applyisoxfm makes).
  image.voxel_to_world = Eigen::Matrix4d::Identity();
  image.voxel_to_world.diagonal().head<3>().setConstant(1.5);
  image.voxel_to_world.topRightCorner<3, 1>() = Eigen::Vector3d(-3, 4, 5);
  write_image(image, dir / "iso.nii.gz");
  const RawNifti w = RawNifti::read_header(dir / "iso.nii.gz");
  EXPECT_EQ(w.qform_code, 1);
  EXPECT_EQ(w.sform_code, 4);
  EXPECT_EQ(w.descrip, "sform edited by hand");
  EXPECT_LT((ras_to_lps(srow_matrix(w)) - image.voxel_to_world).cwiseAbs().maxCoeff(), 1e-6);
  // The qform says the same: read back without the sform, the grid is where it was written.
  RawNifti qform_only = w;
  qform_only.sform_code = 0;
  qform_only.dim = {6, 5, 4};
  qform_only.datatype = 16, qform_only.bitpix = 32;
  qform_only.payload.assign(120 * sizeof(float), 0);
  qform_only.write(dir / "iso_qform.nii");
  EXPECT_LT((read_image(dir / "iso_qform.nii").voxel_to_world - image.voxel_to_world).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(NiftiHeader, AShearedSformIsReadAndWrittenBack) {
  TempDir dir;
  RawNifti n = disagreeing_forms();
  n.srow[0][1] = 0.4f;  // shear: x grows with j
  n.write(dir / "sheared.nii");
  const Image image = read_image(dir / "sheared.nii");
  EXPECT_LT((image.voxel_to_world - ras_to_lps(srow_matrix(n))).cwiseAbs().maxCoeff(), 1e-5);
  write_image(image, dir / "sheared_out.nii");  // NIfTI with its header stores the shear
  const RawNifti w = RawNifti::read_header(dir / "sheared_out.nii");
  EXPECT_EQ(w.srow[0][1], 0.4f);
  EXPECT_LT((read_image(dir / "sheared_out.nii").voxel_to_world - image.voxel_to_world).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(NiftiHeader, ASingularSformIsRefusedNamingTheFile) {
  TempDir dir;
  RawNifti n = disagreeing_forms();
  for (auto& row : n.srow) row[0] = 0.0f;  // the i axis goes nowhere
  n.write(dir / "flat.nii");
  try {
    read_image(dir / "flat.nii");
    FAIL() << "a singular sform was accepted";
  } catch (const regpipe::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("flat.nii"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sform"), std::string::npos) << e.what();
  }
}

TEST(NiftiHeader, ImagesMadeInMemoryAreWrittenAsScannerSpace) {
  TempDir dir;
  Image image;
  image.dims = {4, 3, 2};
  image.data.assign(24, 1.0f);
  write_image(image, dir / "plain.nii.gz");
  const RawNifti w = RawNifti::read_header(dir / "plain.nii.gz");
  EXPECT_EQ(w.qform_code, 1);
  EXPECT_EQ(w.sform_code, 1);
}

}  // namespace
