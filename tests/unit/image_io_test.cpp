// read_image / write_image: formats, orientation against NIfTI headers read independently
// (nibabel 5.4 for the shared data, a hand-written header here), scaling, 4D, bad files.
#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>

#include "support/raw_nifti.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>
#include <vector>

namespace fs = std::filesystem;
using regpipe::Image;
using regpipe::read_image;
using regpipe::ReadOptions;
using regpipe::UserError;
using regpipe::write_image;
using regpipe::test::RawNifti;
using regpipe::test::TempDir;

using regpipe::test::message_of;

namespace {

template <class T>
std::vector<char> bytes_of(const std::vector<T>& values) {
  std::vector<char> b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// NIfTI world is RAS; regpipe and ITK use LPS: x and y change sign.
Eigen::Matrix4d ras_to_lps(const Eigen::Matrix4d& ras) {
  return Eigen::Vector4d(-1, -1, 1, 1).asDiagonal() * ras;
}

Eigen::Matrix4d affine_rows(std::initializer_list<double> twelve) {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  auto it = twelve.begin();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) m(r, c) = *it++;
  return m;
}

// An oblique, anisotropic, mirrored grid with recognisable values.
Image oblique_test_image() {
  Image image;
  image.dims = {7, 5, 4};
  const Eigen::Matrix3d rotation =
      (Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 3).normalized())).toRotationMatrix();
  image.voxel_to_world.topLeftCorner<3, 3>() =
      rotation * Eigen::Vector3d(1.5, -0.75, 2.25).asDiagonal();
  image.voxel_to_world.topRightCorner<3, 1>() = Eigen::Vector3d(-40.5, 12.25, 7.125);
  image.data.resize(image.voxel_count());
  for (size_t i = 0; i < image.data.size(); ++i) image.data[i] = float(i) * 1.25f - 30.0f;
  return image;
}

}  // namespace

TEST(ImageIo, ChrisT1MatchesItsNiftiQform) {
  REGPIPE_REQUIRE_DATA(path, "chris_t1.nii.gz");
  const Image image = read_image(path);
  EXPECT_EQ(image.dims, (std::array<uint32_t, 3>{188, 256, 190}));
  // qform of the header as nibabel 5.4 reports it (RAS).
  const Eigen::Matrix4d qform = affine_rows({0.8799999952316284, 0, 0, -83.12000274658203,   //
                                             0, 0.8799999952316284, 0, -118.12000274658203,  //
                                             0, 0, 0.8799999952316284, -77.12000274658203});
  EXPECT_LT((image.voxel_to_world - ras_to_lps(qform)).cwiseAbs().maxCoeff(), 1e-4);
  // uint8 voxels, values checked with nibabel: x fastest, no flips of the stored order.
  EXPECT_EQ(image.at(45, 60, 40), 110.0f);
  EXPECT_EQ(image.at(50, 70, 30), 122.0f);
  EXPECT_EQ(std::accumulate(image.data.begin(), image.data.end(), 0.0), 411030734.0);
}

TEST(ImageIo, ChrisPdKeepsObliqueAnisotropicGeometry) {
  REGPIPE_REQUIRE_DATA(path, "chris_PD.nii.gz");
  const Image image = read_image(path);
  EXPECT_EQ(image.dims, (std::array<uint32_t, 3>{191, 256, 54}));
  const Eigen::Matrix4d qform = affine_rows(
      {0.8578541137632649, -0.005198791511914926, 0.008433976292483367, -80.83112335205078,  //
       0.0046839312356595116, 0.8498132608210305, 0.356777424335463, -131.49412536621094,    //
       -0.0037526586627968325, -0.127732855910542, 2.373315289292515, -30.349937438964844});
  // ITK builds the direction from the qform quaternion; float storage limits agreement.
  EXPECT_LT((image.voxel_to_world - ras_to_lps(qform)).cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_NEAR(image.spacing().z(), 2.3999972, 1e-5);
  EXPECT_EQ(image.at(45, 60, 40), 68.0f);
  EXPECT_EQ(image.at(50, 70, 30), 98.0f);
}

TEST(ImageIo, Mni152RadiologicalStorageAndInt16) {
  REGPIPE_REQUIRE_DATA(path, "MNI152_T1_2mm.nii.gz");
  const Image image = read_image(path);
  // RAS [[-2,0,0,90],[0,2,0,-126],[0,0,2,-72]]: i runs towards the left, +x in LPS.
  const Eigen::Matrix4d expected = affine_rows({2, 0, 0, -90, 0, -2, 0, 126, 0, 0, 2, -72});
  EXPECT_LT((image.voxel_to_world - expected).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_EQ(image.at(45, 60, 40), 4433.0f);
  EXPECT_EQ(image.at(50, 70, 30), 6838.0f);
  EXPECT_EQ(image.file_type, regpipe::VoxelType::int16);
}

TEST(ImageIo, AppliesNiftiSlopeAndInterceptAndUsesSform) {
  TempDir dir;
  RawNifti nifti;
  nifti.dim = {3, 4, 5};
  nifti.datatype = 4;
  nifti.bitpix = 16;
  nifti.pixdim[0] = 2, nifti.pixdim[1] = 3, nifti.pixdim[2] = 4;
  nifti.slope = 2.5f;
  nifti.intercept = -10.0f;
  nifti.sform_code = 1;
  const float srow[3][4] = {{2, 0, 0, 10}, {0, 3, 0, -20}, {0, 0, 4, 30}};
  std::memcpy(nifti.srow, srow, sizeof(srow));
  std::vector<int16_t> stored(60);
  for (size_t i = 0; i < stored.size(); ++i) stored[i] = int16_t(7 * int(i) - 200);
  nifti.payload = bytes_of(stored);
  nifti.write(dir / "scaled.nii");

  const Image image = read_image(dir / "scaled.nii");
  ASSERT_EQ(image.dims, (std::array<uint32_t, 3>{3, 4, 5}));
  for (size_t i = 0; i < stored.size(); ++i)
    ASSERT_FLOAT_EQ(image.data[i], 2.5f * float(stored[i]) - 10.0f) << "voxel " << i;
  // Scaled integers are not integers: ITK reports float, and so does file_type.
  EXPECT_EQ(image.file_type, regpipe::VoxelType::float32);
  const Eigen::Matrix4d expected =
      ras_to_lps(affine_rows({2, 0, 0, 10, 0, 3, 0, -20, 0, 0, 4, 30}));
  EXPECT_LT((image.voxel_to_world - expected).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(ImageIo, KeepsTheFileTypeOfUnscaledIntegers) {
  TempDir dir;
  RawNifti nifti;
  nifti.dim = {3, 4, 5};
  for (const float slope : {0.0f, 1.0f}) {  // 0: no scaling; 1 with intercept 0: none either
    nifti.slope = slope;
    nifti.datatype = 2, nifti.bitpix = 8;
    nifti.payload = bytes_of(std::vector<uint8_t>(60, 200));
    nifti.write(dir / "u8.nii");
    const Image u8 = read_image(dir / "u8.nii");
    EXPECT_EQ(u8.file_type, regpipe::VoxelType::uint8) << "slope " << slope;
    EXPECT_EQ(u8.data[7], 200.0f);
    nifti.datatype = 4, nifti.bitpix = 16;
    nifti.payload = bytes_of(std::vector<int16_t>(60, -300));
    nifti.write(dir / "i16.nii");
    const Image i16 = read_image(dir / "i16.nii");
    EXPECT_EQ(i16.file_type, regpipe::VoxelType::int16) << "slope " << slope;
    EXPECT_EQ(i16.data[7], -300.0f);
  }
}

TEST(ImageIo, ReadsLegacyAnalyzeWithFslOrientation) {
  TempDir dir;
  RawNifti analyze;
  analyze.magic = "";
  analyze.dim = {3, 2, 2};
  analyze.datatype = 2;
  analyze.bitpix = 8;
  analyze.pixdim[0] = 1.5, analyze.pixdim[1] = 2, analyze.pixdim[2] = 2.5;
  analyze.payload = bytes_of(std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  analyze.write_analyze(dir / "legacy.hdr");

  const Image image = read_image(dir / "legacy.hdr");
  ASSERT_EQ(image.dims, (std::array<uint32_t, 3>{3, 2, 2}));
  EXPECT_EQ(image.at(2, 1, 1), 12.0f);
  EXPECT_EQ(image.at(1, 0, 1), 8.0f);
  EXPECT_TRUE(image.spacing().isApprox(Eigen::Vector3d(1.5, 2, 2.5)));
  // FSL reads Analyze as radiological (LAS): negative determinant, as MNI152 above.
  const Eigen::Matrix3d linear = image.voxel_to_world.topLeftCorner<3, 3>();
  EXPECT_LT(linear.determinant(), 0.0);
}

TEST(ImageIo, FourDimensionalNeedsAVolumeIndex) {
  TempDir dir;
  RawNifti series;
  series.dim = {3, 3, 3, 4};
  std::vector<float> values(3 * 3 * 3 * 4);
  std::iota(values.begin(), values.end(), 0.0f);
  series.payload = bytes_of(values);
  series.write(dir / "series.nii");
  const fs::path path = dir / "series.nii";

  const std::string missing = message_of([&] { read_image(path); });
  EXPECT_NE(missing.find(path.string()), std::string::npos) << missing;
  EXPECT_NE(missing.find("4D image with 4 volumes; set a volume index"), std::string::npos)
      << missing;

  ReadOptions third;
  third.volume_index = 2;
  const Image volume = read_image(path, third);
  ASSERT_EQ(volume.dims, (std::array<uint32_t, 3>{3, 3, 3}));
  for (size_t i = 0; i < volume.data.size(); ++i) ASSERT_EQ(volume.data[i], float(2 * 27 + i));

  ReadOptions beyond;
  beyond.volume_index = 4;
  const std::string out_of_range = message_of([&] { read_image(path, beyond); });
  EXPECT_NE(out_of_range.find("volume index 4 is out of range: the file has 4 volumes"),
            std::string::npos)
      << out_of_range;
}

TEST(ImageIo, VolumeIndexBeyondZeroOnA3dFileIsAnError) {
  TempDir dir;
  write_image(oblique_test_image(), dir / "one.nii");
  ReadOptions second;
  second.volume_index = 1;
  EXPECT_NE(message_of([&] { read_image(dir / "one.nii", second); }).find("the file has 1 volume "),
            std::string::npos);
  second.volume_index = 0;
  EXPECT_EQ(read_image(dir / "one.nii", second).dims, (std::array<uint32_t, 3>{7, 5, 4}));
}

TEST(ImageIo, RefusesTwoDimensionalAndFiveDimensionalImages) {
  TempDir dir;
  RawNifti flat;
  flat.dim = {4, 3};
  flat.payload = bytes_of(std::vector<float>(12, 1.0f));
  flat.write(dir / "flat.nii");
  EXPECT_NE(message_of([&] { read_image(dir / "flat.nii"); }).find("2D image (4x3)"),
            std::string::npos);

  RawNifti five;
  five.dim = {2, 2, 2, 2, 3};
  five.payload = bytes_of(std::vector<float>(48, 1.0f));
  five.write(dir / "five.nii");
  const std::string message = message_of([&] { read_image(dir / "five.nii"); });
  // ITK reads NIfTI's fifth axis as vector components; either way it must be refused.
  EXPECT_NE(message.find("five.nii"), std::string::npos) << message;
  EXPECT_NE(message.find("supported"), std::string::npos) << message;
}

TEST(ImageIo, RefusesRgbPixels) {
  TempDir dir;
  RawNifti rgb;
  rgb.dim = {2, 2, 2};
  rgb.datatype = 128;
  rgb.bitpix = 24;
  rgb.payload = std::vector<char>(24, 7);
  rgb.write(dir / "rgb.nii");
  const std::string message = message_of([&] { read_image(dir / "rgb.nii"); });
  EXPECT_NE(message.find("rgb.nii"), std::string::npos) << message;
  EXPECT_NE(message.find("only scalar (grey-level) images are supported"), std::string::npos)
      << message;
}

TEST(ImageIo, MissingAndUnrecognisedFilesNameThePath) {
  TempDir dir;
  const std::string missing = message_of([&] { read_image(dir / "absent.nii.gz"); });
  EXPECT_NE(missing.find((dir / "absent.nii.gz").string() + "': no such file"), std::string::npos)
      << missing;

  std::ofstream(dir / "notes.nii") << "this is not an image\n";
  const std::string garbage = message_of([&] { read_image(dir / "notes.nii"); });
  EXPECT_NE(garbage.find("notes.nii"), std::string::npos) << garbage;
  EXPECT_NE(garbage.find("supported format"), std::string::npos) << garbage;
}

TEST(ImageIo, TruncatedOrCorruptFilesAreUserErrors) {
  // ITK alone reads short NIfTI and MetaImage data as zeros; every format must refuse.
  TempDir dir;
  Image big = oblique_test_image();
  big.dims = {40, 40, 40};
  big.data.resize(big.voxel_count());
  for (size_t i = 0; i < big.data.size(); ++i) big.data[i] = float((i * 7919) % 1000);
  for (const char* name : {"cut.nii", "cut.nii.gz", "cut.mha", "cut.nrrd", "cut.hdr"}) {
    const fs::path path = dir / name;
    write_image(big, path);
    fs::path data = path;
    if (data.extension() == ".hdr") data.replace_extension(".img");
    fs::resize_file(data, fs::file_size(data) / 2);
    const std::string message = message_of([&] { read_image(path); });
    EXPECT_EQ(message.rfind("cannot read image '" + path.string() + "': ", 0), 0u) << message;
    if (data.extension() != ".nrrd")  // ITK's own NRRD message says "fread got only ..."
      EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }

  const fs::path damaged = dir / "damaged.nii.gz";
  write_image(big, damaged);
  {
    std::fstream file(damaged, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(std::streamoff(fs::file_size(damaged) / 2));
    file.write("garbage!", 8);
  }
  const std::string message = message_of([&] { read_image(damaged); });
  EXPECT_NE(message.find("damaged.nii.gz': corrupt or truncated compressed data"),
            std::string::npos)
      << message;
}

TEST(ImageIo, WriteThenReadRoundTripsEveryFormat) {
  TempDir dir;
  const Image original = oblique_test_image();
  for (const char* name : {"r.nii.gz", "r.nii", "r.nrrd", "r.mha", "r.hdr"}) {
    SCOPED_TRACE(name);
    write_image(original, dir / name);
    const Image back = read_image(dir / name);
    EXPECT_EQ(back.dims, original.dims);
    EXPECT_EQ(back.data, original.data);
    // NIfTI stores the geometry as float32: ~1e-7 relative.
    EXPECT_LT((back.voxel_to_world - original.voxel_to_world).cwiseAbs().maxCoeff(), 2e-5);
  }
  // Only the outputs: no temporaries left behind, the .hdr came with its .img.
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"r.hdr", "r.img", "r.mha", "r.nii", "r.nii.gz", "r.nrrd"}));
}

TEST(ImageIo, WriteFailuresNameTheFolderAndLeaveNothing) {
  TempDir dir;
  const Image image = oblique_test_image();
  const std::string missing = message_of([&] { write_image(image, dir / "nowhere" / "a.nii.gz"); });
  EXPECT_NE(missing.find("folder '" + (dir / "nowhere").string() + "' does not exist"),
            std::string::npos)
      << missing;

  std::ofstream(dir / "plain") << "x";
  const std::string not_folder = message_of([&] { write_image(image, dir / "plain" / "a.nii"); });
  EXPECT_NE(not_folder.find("'" + (dir / "plain").string() + "' is not a folder"),
            std::string::npos)
      << not_folder;

  const std::string format = message_of([&] { write_image(image, dir / "a.png"); });
  EXPECT_NE(format.find("unsupported output format '.png'"), std::string::npos) << format;

  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(ImageIo, FolderThatRefusesNewFilesIsAUserError) {
  // /proc takes no new files, even from root (for whom permission bits do not stop writes);
  // ITK's NIfTI writer only complains on stderr, so write_image must notice by itself.
  const std::string message = message_of([&] { write_image(oblique_test_image(), "/proc/x.nii"); });
  EXPECT_EQ(message.rfind("cannot write '/proc/x.nii': ", 0), 0u) << message;
  EXPECT_FALSE(fs::exists("/proc/x.nii"));
}

TEST(ImageIo, RefusesToWriteAShearedGrid) {
  TempDir dir;
  Image sheared = oblique_test_image();
  sheared.voxel_to_world(0, 1) += 0.5;
  const std::string message = message_of([&] { write_image(sheared, dir / "s.nii.gz"); });
  EXPECT_NE(message.find("not orthogonal"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir / "s.nii.gz"));
}
