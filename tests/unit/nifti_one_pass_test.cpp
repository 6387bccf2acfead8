// .nii.gz read in one pass and written in parallel (issue 17) give what ITK gave: read_image
// decodes every integer and float type, either byte order, scl_slope / scl_inter and non-finite
// floats to the very voxels ITK's own NIfTI reader makes, on synthetic files and on the shared
// data (also rewritten as a multi-member stream); damage keeps its messages; and the files
// written decompress to the bytes of the uncompressed writers (niftilib's and ITK's).
#include <regpipe/host/displacement_field_io.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>

#include "image/decompressed_file.hpp"
#include "image/nifti_voxels.hpp"
#include "image/parallel_gzip.hpp"

#include "support/file_bytes.hpp"
#include "support/test_support.hpp"

// ITK's bundled Eigen 3.3 and the system Eigen 3.4 cannot meet (see image_io.cpp).
#define ITK_USE_SYSTEM_EIGEN
#include <itkImageFileReader.h>
#include <itkNiftiImageIO.h>
#include <nifti1_io.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

namespace fs = std::filesystem;
using namespace regpipe;
using regpipe::test::file_bytes;
using regpipe::test::gunzip;
using regpipe::test::TempDir;

namespace {

void write_bytes(const fs::path& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void gzip_with_zlib(const fs::path& path, const std::vector<unsigned char>& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  gzwrite(gz, bytes.data(), unsigned(bytes.size()));
  gzclose(gz);
}

// What ITK's own NIfTI reader makes of a file: float voxels and the grid.
struct ItkRead {
  std::vector<float> voxels;
  std::array<uint32_t, 3> dims{};
  Eigen::Matrix4d voxel_to_world = Eigen::Matrix4d::Identity();
};
ItkRead read_with_itk(const fs::path& path) {
  using Volume = itk::Image<float, 3>;
  auto reader = itk::ImageFileReader<Volume>::New();
  reader->SetImageIO(itk::NiftiImageIO::New());
  reader->SetFileName(path.string());
  reader->Update();
  const Volume* v = reader->GetOutput();
  ItkRead out;
  for (unsigned d = 0; d < 3; ++d) out.dims[d] = uint32_t(v->GetLargestPossibleRegion().GetSize()[d]);
  for (unsigned r = 0; r < 3; ++r) {
    for (unsigned c = 0; c < 3; ++c) out.voxel_to_world(r, c) = v->GetDirection()(r, c) * v->GetSpacing()[c];
    out.voxel_to_world(r, 3) = v->GetOrigin()[r];
  }
  out.voxels.assign(v->GetBufferPointer(), v->GetBufferPointer() + v->GetLargestPossibleRegion().GetNumberOfPixels());
  return out;
}

// Float voxels compared bit for bit (a -0 or a NaN must come out as ITK's).
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Case {
  const char* name;
  int datatype;
  bool big_endian;
  float slope, intercept;
};

// A 9x7x5 volume through niftilib (the writer FSL's tools share), values spanning the type,
// with an oblique qform; big-endian by swapping the bytes niftilib wrote.
std::vector<unsigned char> synthetic_nifti(const Case& c, const fs::path& scratch) {
  int dims[8] = {3, 9, 7, 5, 1, 1, 1, 1};
  nifti_image* nim = nifti_make_new_nim(dims, c.datatype, 1);
  for (size_t i = 0; i < nim->nvox; ++i) {
    const double v = (double(i) - 100.0) * 37.25;  // negatives, fractions, large values
    switch (c.datatype) {
      case DT_UINT8: static_cast<uint8_t*>(nim->data)[i] = uint8_t(i * 7); break;
      case DT_INT8: static_cast<int8_t*>(nim->data)[i] = int8_t(i * 7); break;
      case DT_UINT16: static_cast<uint16_t*>(nim->data)[i] = uint16_t(i * 257); break;
      case DT_INT16: static_cast<int16_t*>(nim->data)[i] = int16_t(i * 257); break;
      case DT_UINT32: static_cast<uint32_t*>(nim->data)[i] = uint32_t(i * 16777259u); break;
      case DT_INT32: static_cast<int32_t*>(nim->data)[i] = int32_t(i * 16777259u); break;
      case DT_FLOAT32: static_cast<float*>(nim->data)[i] = float(v) / 3.0f; break;
      case DT_FLOAT64: static_cast<double*>(nim->data)[i] = v / 3.0; break;
    }
  }
  if (c.datatype == DT_FLOAT32) {  // niftilib reads these as 0
    static_cast<float*>(nim->data)[3] = std::numeric_limits<float>::quiet_NaN();
    static_cast<float*>(nim->data)[4] = -std::numeric_limits<float>::infinity();
  }
  if (c.datatype == DT_FLOAT64) static_cast<double*>(nim->data)[5] = std::numeric_limits<double>::infinity();
  nim->scl_slope = c.slope;
  nim->scl_inter = c.intercept;
  nim->qform_code = 1;
  nim->quatern_b = 0.1f;
  nim->quatern_c = -0.2f;
  nim->quatern_d = 0.05f;
  nim->qoffset_x = 12.5f;
  nim->qoffset_y = -30.0f;
  nim->qoffset_z = 4.0f;
  nim->dx = nim->pixdim[1] = 1.5f;
  nim->dy = nim->pixdim[2] = 0.9f;
  nim->dz = nim->pixdim[3] = 2.0f;
  nim->xyz_units = NIFTI_UNITS_MM;
  nifti_set_filenames(nim, scratch.c_str(), 0, 1);
  nim->nifti_type = NIFTI_FTYPE_NIFTI1_1;
  nifti_image_write(nim);
  const size_t nvox = nim->nvox, nbyper = size_t(nim->nbyper);
  nifti_image_free(nim);
  std::vector<unsigned char> bytes = file_bytes(scratch);
  if (c.big_endian) {
    nifti_1_header header;
    std::memcpy(&header, bytes.data(), sizeof(header));
    swap_nifti_header(&header, 1);
    std::memcpy(bytes.data(), &header, sizeof(header));
    if (nbyper > 1) nifti_swap_Nbytes(nvox, int(nbyper), bytes.data() + 352);
  }
  return bytes;
}

class NiftiOnePass : public ::testing::TestWithParam<Case> {};

TEST_P(NiftiOnePass, ReadsTheVoxelsAndGridItksReaderReads) {
  TempDir dir;
  const Case& c = GetParam();
  const fs::path path = dir / "x.nii.gz";
  gzip_with_zlib(path, synthetic_nifti(c, dir / "scratch.nii"));
  const auto contents = image_detail::read_decompressed(path, 1 << 20);
  ASSERT_TRUE(contents);
  ASSERT_TRUE(image_detail::decode_nifti_voxels(*contents, 9 * 7 * 5)) << "the one-pass decoder must take it";

  const ItkRead itk = read_with_itk(path);
  const Image image = read_image(path);
  EXPECT_EQ(image.dims, itk.dims);
  EXPECT_TRUE(same_bits(image.data, itk.voxels));
  EXPECT_EQ(image.voxel_to_world, itk.voxel_to_world);  // qform only: ITK's placement stands
}

INSTANTIATE_TEST_SUITE_P(
    TypesByteOrdersScaling, NiftiOnePass,
    ::testing::Values(Case{"uint8", DT_UINT8, false, 0, 0}, Case{"int8_big", DT_INT8, true, 0, 0},
                      Case{"uint16_big", DT_UINT16, true, 0, 0}, Case{"int16", DT_INT16, false, 0, 0},
                      Case{"int16_scaled", DT_INT16, false, 0.37f, -1024.5f},
                      Case{"int16_scaled_big", DT_INT16, true, 0.37f, -1024.5f},
                      Case{"uint8_slope0_intercept", DT_UINT8, false, 0.0f, 2.5f},
                      Case{"uint32", DT_UINT32, false, 0, 0}, Case{"int32_big_scaled", DT_INT32, true, 1e-3f, 7.0f},
                      Case{"float32_nonfinite", DT_FLOAT32, false, 0, 0},
                      Case{"float32_big_scaled", DT_FLOAT32, true, 2.5f, 0.125f},
                      Case{"float64_nonfinite", DT_FLOAT64, false, 0, 0},
                      Case{"float64_big_scaled", DT_FLOAT64, true, -0.75f, 3.0f}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// The shared data as ITK reads it, also rewritten as a multi-member stream of ours.
TEST(NiftiOnePassData, SharedImagesReadAsItkReadsThem) {
  TempDir dir;
  for (const char* name : {"chris_t1.nii.gz", "chris_PD.nii.gz", "MNI152_T1_2mm.nii.gz", "T2w.nii.gz"}) {
    SCOPED_TRACE(name);
    REGPIPE_REQUIRE_DATA(path, name);
    const ItkRead itk = read_with_itk(path);
    const Image image = read_image(path);
    EXPECT_EQ(image.dims, itk.dims);
    EXPECT_TRUE(same_bits(image.data, itk.voxels));

    const std::vector<unsigned char> plain = gunzip(path);
    const fs::path members = dir / name;
    write_bytes(members, image_detail::gzip_members(plain.data(), plain.size(), image_detail::kGzipLevel, 4));
    const Image again = read_image(members);
    EXPECT_TRUE(same_bits(again.data, image.data));
    EXPECT_EQ(again.voxel_to_world, image.voxel_to_world);
  }
}

// A float image large enough for several members.
Image float_image() {
  Image image;
  image.dims = {96, 80, 70};
  image.voxel_to_world << 0, 0, -1.2, 50, 1.1, 0, 0, -60, 0, -0.9, 0, 30, 0, 0, 0, 1;
  image.data.resize(image.voxel_count());
  for (size_t i = 0; i < image.data.size(); ++i) image.data[i] = std::sin(float(i) * 1e-3f) * 100.0f + float(i % 97);
  return image;
}

TEST(NiftiOnePassWrite, GzippedFilesHoldTheBytesOfTheUncompressedWriters) {
  TempDir dir;
  // Without a NIfTI header: ITK's form, from memory (itk_form_nifti_test.cpp holds it to ITK's).
  Image image = float_image();
  write_image(image, dir / "itk.nii.gz");
  write_image(image, dir / "itk.nii");
  EXPECT_EQ(gunzip(dir / "itk.nii.gz"), file_bytes(dir / "itk.nii"));
  EXPECT_TRUE(same_bits(read_with_itk(dir / "itk.nii.gz").voxels, image.data));

  // With one (what the registered image carries): niftilib's header, written by regpipe; the
  // bytes niftilib writes for the same header and voxels.
  Image with_header = read_image(dir / "itk.nii.gz");
  ASSERT_TRUE(with_header.nifti);
  write_image(with_header, dir / "niftilib.nii.gz", VoxelType::int16);
  write_image(with_header, dir / "niftilib.nii", VoxelType::int16);
  const std::vector<unsigned char> ours = gunzip(dir / "niftilib.nii.gz");
  EXPECT_EQ(ours, file_bytes(dir / "niftilib.nii"));
  nifti_image* nim = nifti_image_read((dir / "niftilib.nii").c_str(), 1);
  ASSERT_NE(nim, nullptr);
  nifti_set_filenames(nim, (dir / "by_niftilib.nii").c_str(), 0, 1);
  nifti_image_write(nim);
  nifti_image_free(nim);
  EXPECT_EQ(ours, file_bytes(dir / "by_niftilib.nii"));

  // A displacement field: ITK's vector form, from memory.
  regpipe_common::DisplacementField field;
  field.geometry.dims = {40, 36, 30};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) field.geometry.voxel_to_world[4 * r + c] = r == c ? 2.0 - (r == 3) : 0.0;
  field.vectors.resize(3 * 40 * 36 * 30);
  for (size_t i = 0; i < field.vectors.size(); ++i) field.vectors[i] = float(i % 1013) * 0.01f - 5.0f;
  write_displacement_field(field, dir / "1Warp.nii.gz");
  write_displacement_field(field, dir / "1Warp.nii");
  EXPECT_EQ(gunzip(dir / "1Warp.nii.gz"), file_bytes(dir / "1Warp.nii"));
  EXPECT_EQ(read_displacement_field(dir / "1Warp.nii.gz").vectors, field.vectors);

  // Only the outputs: no temporary left.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find(".partial-"), std::string::npos) << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 7u);
}

std::string read_error_of(const fs::path& path) {
  try {
    read_image(path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NiftiOnePassWrite, DamagedMultiMemberFilesKeepTheirMessages) {
  TempDir dir;
  const Image image = float_image();
  write_image(image, dir / "ok.nii.gz");
  const std::vector<unsigned char> gz = file_bytes(dir / "ok.nii.gz");

  std::vector<unsigned char> crc = gz;
  crc[gz.size() - 6] ^= 0x5a;  // the last member's CRC
  write_bytes(dir / "crc.nii.gz", crc);
  EXPECT_EQ(read_error_of(dir / "crc.nii.gz"), "cannot read image '" + (dir / "crc.nii.gz").string() +
                                                   "': corrupt or truncated compressed data (zlib: incorrect data check)");

  std::vector<unsigned char> cut(gz.begin(), gz.begin() + std::ptrdiff_t(gz.size() / 2));
  write_bytes(dir / "cut.nii.gz", cut);
  const std::string message = read_error_of(dir / "cut.nii.gz");
  const std::string promised = std::to_string(352 + image.voxel_count() * 4);
  EXPECT_EQ(message.rfind("cannot read image '" + (dir / "cut.nii.gz").string() + "': truncated: the file decompresses to ", 0), 0u)
      << message;
  EXPECT_NE(message.find(" of the " + promised + " bytes its header promises"), std::string::npos) << message;
}

}  // namespace
