// Displacement-field files (ITK/ANTs *Warp.nii.gz): a field written and read back is the same
// bit for bit on the same grid, the file has ITK's vector form (checked byte by byte here and
// with nibabel in tests/interop), and bad files are refused with the problem named.
#include <regpipe/host/displacement_field_io.hpp>
#include <regpipe/host/image.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

namespace fs = std::filesystem;
using regpipe::read_displacement_field;
using regpipe::write_displacement_field;
using regpipe::test::message_of;
using regpipe_common::DisplacementField;

namespace {

// A 5x4x3 field on an oblique grid (a rotation about z and x, anisotropic voxels, an
// origin off zero) with values of every magnitude.
DisplacementField oblique_field() {
  DisplacementField field;
  field.geometry.dims = {5, 4, 3};
  const double a = 0.3, b = -0.2;
  const double rz[3][3] = {{std::cos(a), -std::sin(a), 0}, {std::sin(a), std::cos(a), 0}, {0, 0, 1}};
  const double rx[3][3] = {{1, 0, 0}, {0, std::cos(b), -std::sin(b)}, {0, std::sin(b), std::cos(b)}};
  const double spacing[3] = {1.5, 2.0, 3.25};
  const double origin[3] = {-12.5, 40.0, 7.75};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      double v = 0;
      for (int k = 0; k < 3; ++k) v += rz[r][k] * rx[k][c];
      field.geometry.voxel_to_world[4 * r + c] = v * spacing[c];
    }
    field.geometry.voxel_to_world[4 * r + 3] = origin[r];
  }
  field.geometry.voxel_to_world[12] = field.geometry.voxel_to_world[13] = field.geometry.voxel_to_world[14] = 0;
  field.geometry.voxel_to_world[15] = 1;
  std::mt19937 random(16);
  std::uniform_real_distribution<float> uniform(-20.f, 20.f);
  for (size_t i = 0; i < 3 * 60; ++i) field.vectors.push_back(uniform(random));
  field.vectors[0] = 1e-30f;
  field.vectors[1] = -std::numeric_limits<float>::denorm_min();
  field.vectors[2] = 3.0e7f;
  return field;
}

// The 348-byte header of an uncompressed .nii, patched in place.
template <class T>
void patch(const fs::path& path, size_t offset, T value) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(std::streamoff(offset));
  file.write(reinterpret_cast<const char*>(&value), sizeof(value));
}

template <class T>
T header_field(const fs::path& path, size_t offset) {
  std::ifstream file(path, std::ios::binary);
  file.seekg(std::streamoff(offset));
  T value{};
  file.read(reinterpret_cast<char*>(&value), sizeof(value));
  return value;
}

}  // namespace

TEST(DisplacementFieldIo, RoundTripIsBitForBitOnTheSameObliqueGrid) {
  regpipe::test::TempDir dir;
  const DisplacementField field = oblique_field();
  for (const char* name : {"1Warp.nii.gz", "1Warp.nii"}) {
    write_displacement_field(field, dir / name);
    const DisplacementField back = read_displacement_field(dir / name);
    EXPECT_EQ(back.geometry.dims.nx, 5);
    EXPECT_EQ(back.geometry.dims.ny, 4);
    EXPECT_EQ(back.geometry.dims.nz, 3);
    ASSERT_EQ(back.vectors.size(), field.vectors.size());
    EXPECT_EQ(std::memcmp(back.vectors.data(), field.vectors.data(), field.vectors.size() * sizeof(float)), 0)
        << name;
    // ITK stores the grid as spacing, origin and direction in double; the NIfTI header's
    // float forms are not used where they agree with ITK's reading (1e-12: double rounding).
    for (int i = 0; i < 16; ++i)
      EXPECT_NEAR(back.geometry.voxel_to_world[i], field.geometry.voxel_to_world[i], 1e-5) << name << " " << i;
  }
}

TEST(DisplacementFieldIo, WritesItkVectorForm) {
  regpipe::test::TempDir dir;
  write_displacement_field(oblique_field(), dir / "f.nii");
  const fs::path f = dir / "f.nii";
  EXPECT_EQ(header_field<int32_t>(f, 0), 348);
  const int16_t expected_dim[6] = {5, 5, 4, 3, 1, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(header_field<int16_t>(f, 40 + 2 * i), expected_dim[i]) << "dim[" << i << "]";
  EXPECT_EQ(header_field<int16_t>(f, 68), 1007) << "intent_code NIFTI_INTENT_VECTOR";
  EXPECT_EQ(header_field<int16_t>(f, 70), 16) << "datatype float32";
  // Vectors as stored: LPS, component-major after the voxels (x y z planes), as ITK writes them.
  const DisplacementField field = oblique_field();
  const float offset = header_field<float>(f, 108);
  std::ifstream file(f, std::ios::binary);
  file.seekg(std::streamoff(offset));
  std::vector<float> stored(field.vectors.size());
  file.read(reinterpret_cast<char*>(stored.data()), std::streamsize(stored.size() * sizeof(float)));
  for (size_t v = 0; v < 60; ++v)
    for (size_t c = 0; c < 3; ++c)
      ASSERT_EQ(stored[c * 60 + v], field.vectors[3 * v + c]) << "voxel " << v << " component " << c;
}

TEST(DisplacementFieldIo, NamesEachKindOfBadFile) {
  regpipe::test::TempDir dir;
  EXPECT_NE(message_of([&] { read_displacement_field(dir / "missing.nii.gz"); }).find("no such file"),
            std::string::npos);
  std::ofstream(dir / "text.nii.gz") << "not a NIfTI file";
  EXPECT_NE(message_of([&] { read_displacement_field(dir / "text.nii.gz"); }).find("not a NIfTI-1 file"),
            std::string::npos);

  // A 3D scalar image, and a 4D one with its 3 values on the time axis.
  regpipe::Image scalar;
  scalar.dims = {4, 3, 2};
  scalar.data.assign(24, 1.0f);
  regpipe::write_image(scalar, dir / "scalar.nii.gz");
  EXPECT_NE(message_of([&] { read_displacement_field(dir / "scalar.nii.gz"); }).find("3D scalar image (4x3x2)"),
            std::string::npos)
      << message_of([&] { read_displacement_field(dir / "scalar.nii.gz"); });
  regpipe::ImageVolumes series;
  series.volumes.assign(3, scalar);
  series.volume_step = 1.0;
  regpipe::write_image_volumes(series, dir / "series.nii.gz");
  const std::string four_d = message_of([&] { read_displacement_field(dir / "series.nii.gz"); });
  EXPECT_NE(four_d.find("4D scalar image (4x3x2x3), its 3 values per voxel on the 4th (time) axis"),
            std::string::npos)
      << four_d;

  // Fields patched into each wrong form.
  auto patched = [&](const std::string& name, size_t offset, int16_t value) {
    write_displacement_field(oblique_field(), dir / name);
    patch(dir / name, offset, value);
    return message_of([&] { read_displacement_field(dir / name); });
  };
  EXPECT_NE(patched("two.nii", 50, 2).find("holds 2 components per voxel"), std::string::npos);
  EXPECT_NE(patched("time.nii", 48, 2).find("holds 2 fields, one per time point"), std::string::npos);
  const std::string dispvect = patched("dispvect.nii", 68, 1006);
  EXPECT_NE(dispvect.find("intent code is 1006 (NIFTI_INTENT_DISPVECT)"), std::string::npos) << dispvect;
  EXPECT_NE(dispvect.find("set_intent('vector')"), std::string::npos) << dispvect;
  EXPECT_NE(patched("none.nii", 68, 0).find("intent code is 0 (none)"), std::string::npos);
  write_displacement_field(oblique_field(), dir / "int32.nii");
  patch(dir / "int32.nii", 70, int16_t(8));  // int32: the same bitpix, 32
  EXPECT_NE(message_of([&] { read_displacement_field(dir / "int32.nii"); }).find("data type is NIfTI code 8"),
            std::string::npos)
      << message_of([&] { read_displacement_field(dir / "int32.nii"); });

  // A NaN and an infinity in the vectors: the voxel is named.
  write_displacement_field(oblique_field(), dir / "nan.nii");
  const float offset = header_field<float>(dir / "nan.nii", 108);
  // Voxel (1, 2, 0) = 11, its y component: after 60 x components, at 60 + 11.
  patch(dir / "nan.nii", size_t(offset) + 4 * (60 + 11), std::numeric_limits<float>::quiet_NaN());
  // niftilib would read it as 0: the stored bytes are checked.
  const std::string nan = message_of([&] { read_displacement_field(dir / "nan.nii"); });
  EXPECT_NE(nan.find("vector at voxel (1, 2, 0) has a y component that is NaN or infinite"), std::string::npos)
      << nan;
  // The last voxel's z component, +infinity, in a gzipped file.
  write_displacement_field(oblique_field(), dir / "inf.nii");
  patch(dir / "inf.nii", size_t(offset) + 4 * (3 * 60 - 1), std::numeric_limits<float>::infinity());
  std::string out;
  ASSERT_EQ(regpipe::test::run_command("gzip '" + (dir / "inf.nii").string() + "'", &out), 0) << out;
  const std::string inf = message_of([&] { read_displacement_field(dir / "inf.nii.gz"); });
  EXPECT_NE(inf.find("vector at voxel (4, 3, 2) has a z component that is NaN or infinite"), std::string::npos)
      << inf;

  // A file cut short.
  write_displacement_field(oblique_field(), dir / "short.nii");
  fs::resize_file(dir / "short.nii", fs::file_size(dir / "short.nii") - 100);
  EXPECT_NE(message_of([&] { read_displacement_field(dir / "short.nii"); }).find("truncated"), std::string::npos)
      << message_of([&] { read_displacement_field(dir / "short.nii"); });
}

TEST(DisplacementFieldIo, RefusesWhatItCannotWriteAndLeavesNothing) {
  regpipe::test::TempDir dir;
  DisplacementField field = oblique_field();
  EXPECT_NE(message_of([&] { write_displacement_field(field, dir / "f.mha"); }).find("name it .nii.gz"),
            std::string::npos);
  DisplacementField sheared = field;
  sheared.geometry.voxel_to_world[1] += 0.5;
  EXPECT_NE(message_of([&] { write_displacement_field(sheared, dir / "s.nii.gz"); }).find("not orthogonal"),
            std::string::npos);
  DisplacementField short_field = field;
  short_field.vectors.pop_back();
  EXPECT_NE(message_of([&] { write_displacement_field(short_field, dir / "n.nii.gz"); }).find("need 3 each"),
            std::string::npos);
  DisplacementField infinite = field;
  infinite.vectors[7] = std::numeric_limits<float>::infinity();
  EXPECT_NE(message_of([&] { write_displacement_field(infinite, dir / "i.nii.gz"); }).find("inf"),
            std::string::npos);
  EXPECT_NE(message_of([&] { write_displacement_field(field, dir / "no_folder" / "f.nii.gz"); }).find("no_folder"),
            std::string::npos);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(DisplacementFieldIo, TellsNiftiFilesByContent) {
  regpipe::test::TempDir dir;
  write_displacement_field(oblique_field(), dir / "warp.nii.gz");
  fs::copy_file(dir / "warp.nii.gz", dir / "warp_without_extension");
  EXPECT_TRUE(regpipe::is_nifti_file(dir / "warp.nii.gz"));
  EXPECT_TRUE(regpipe::is_nifti_file(dir / "warp_without_extension"));
  std::ofstream(dir / "affine.txt") << "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n";
  EXPECT_FALSE(regpipe::is_nifti_file(dir / "affine.txt"));
  EXPECT_FALSE(regpipe::is_nifti_file(dir / "missing.nii.gz"));
  EXPECT_FALSE(regpipe::is_nifti_file(dir.path()));
}
