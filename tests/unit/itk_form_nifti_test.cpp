// NIfTI files written from memory in ITK's form (itk_form_nifti.hpp: images without a NIfTI
// header of their own, ANTs' displacement fields) hold the very bytes ITK 5.2's own NIfTI writer
// writes for the same grid and voxels, each voxel type and oblique grids; the .nii.gz holds them
// gzipped, and ITK's reader reads the files back to the values written.
#include <regpipe/host/displacement_field_io.hpp>
#include <regpipe/host/image.hpp>

#include "image/stored_values.hpp"

#include "support/file_bytes.hpp"
#include "support/test_support.hpp"

// ITK's bundled Eigen 3.3 and the system Eigen 3.4 cannot meet (see image_io.cpp).
#define ITK_USE_SYSTEM_EIGEN
#include <itkImageFileReader.h>
#include <itkImageFileWriter.h>
#include <itkNiftiImageIO.h>
#include <itkVector.h>

#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <cmath>
#include <fstream>

namespace fs = std::filesystem;
using namespace regpipe;
using regpipe::test::file_bytes;
using regpipe::test::gunzip;
using regpipe::test::TempDir;

namespace {

// An oblique grid (rotated about two axes, anisotropic voxels, origin off zero), LPS.
Eigen::Matrix4d oblique_grid() {
  const Eigen::Matrix3d rotation =
      (Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitZ()) * Eigen::AngleAxisd(-0.2, Eigen::Vector3d::UnitX()))
          .toRotationMatrix();
  Eigen::Matrix4d grid = Eigen::Matrix4d::Identity();
  grid.topLeftCorner<3, 3>() = rotation * Eigen::Vector3d(1.5, 2.0, 3.25).asDiagonal();
  grid.block<3, 1>(0, 3) = Eigen::Vector3d(-12.5, 40.0, 7.75);
  return grid;
}

// An ITK image of `dims` on `grid` (ITK's own spacing / direction / origin split).
template <class ItkImage>
typename ItkImage::Pointer itk_image_on(const std::array<uint32_t, 3>& dims, const Eigen::Matrix4d& grid) {
  auto image = ItkImage::New();
  typename ItkImage::RegionType region;
  typename ItkImage::SpacingType spacing;
  typename ItkImage::PointType origin;
  typename ItkImage::DirectionType direction;
  for (unsigned r = 0; r < 3; ++r) {
    region.SetSize(r, dims[r]);
    spacing[r] = grid.block<3, 1>(0, r).norm();
    origin[r] = grid(r, 3);
  }
  for (unsigned r = 0; r < 3; ++r)
    for (unsigned c = 0; c < 3; ++c) direction(r, c) = grid(r, c) / spacing[c];
  image->SetRegions(region);
  image->SetSpacing(spacing);
  image->SetOrigin(origin);
  image->SetDirection(direction);
  image->Allocate();
  return image;
}

// What ITK's NIfTI writer writes for `image`, uncompressed.
template <class ItkImage>
std::vector<unsigned char> written_by_itk(const typename ItkImage::Pointer& image, const fs::path& path) {
  auto writer = itk::ImageFileWriter<ItkImage>::New();
  writer->SetImageIO(itk::NiftiImageIO::New());
  writer->SetFileName(path.string());
  writer->SetInput(image);
  writer->Update();
  return file_bytes(path);
}

Image scalar_image() {
  Image image;
  image.dims = {23, 17, 11};
  image.voxel_to_world = oblique_grid();
  image.data.resize(image.voxel_count());
  for (size_t i = 0; i < image.data.size(); ++i) image.data[i] = std::sin(float(i) * 0.01f) * 300.0f + 0.25f;
  return image;
}

regpipe_common::DisplacementField vector_field() {
  regpipe_common::DisplacementField field;
  field.geometry.dims = {19, 13, 9};
  const Eigen::Matrix4d grid = oblique_grid();
  for (int i = 0; i < 16; ++i) field.geometry.voxel_to_world[i] = grid(i / 4, i % 4);
  field.vectors.resize(3 * 19 * 13 * 9);
  for (size_t i = 0; i < field.vectors.size(); ++i) field.vectors[i] = std::cos(float(i) * 0.37f) * 7.5f;
  return field;
}

}  // namespace

TEST(ItkFormNifti, ImagesHoldTheBytesItksWriterWritesInEveryVoxelType) {
  TempDir dir;
  const Image image = scalar_image();
  for (const VoxelType type : {VoxelType::uint8, VoxelType::int8, VoxelType::uint16, VoxelType::int16,
                               VoxelType::uint32, VoxelType::int32, VoxelType::float32, VoxelType::float64}) {
    SCOPED_TRACE(int(type));
    const std::vector<unsigned char> itk = image_detail::with_voxel_type(type, [&](auto zero) {
      using Volume = itk::Image<decltype(zero), 3>;
      const typename Volume::Pointer volume = itk_image_on<Volume>(image.dims, image.voxel_to_world);
      image_detail::store_values(image.data, volume->GetBufferPointer());
      return written_by_itk<Volume>(volume, dir / "itk.nii");
    });
    write_image(image, dir / "ours.nii", type);
    write_image(image, dir / "ours.nii.gz", type);
    EXPECT_EQ(file_bytes(dir / "ours.nii"), itk);
    EXPECT_EQ(gunzip(dir / "ours.nii.gz"), itk);
  }
  // Read back by ITK's own reader: the values and the grid written.
  auto reader = itk::ImageFileReader<itk::Image<float, 3>>::New();
  reader->SetImageIO(itk::NiftiImageIO::New());
  reader->SetFileName((dir / "ours.nii.gz").string());
  reader->Update();
  const auto* back = reader->GetOutput();
  EXPECT_TRUE(std::equal(image.data.begin(), image.data.end(), back->GetBufferPointer()));
  for (unsigned r = 0; r < 3; ++r) {
    EXPECT_NEAR(back->GetOrigin()[r], image.voxel_to_world(r, 3), 1e-5);
    for (unsigned c = 0; c < 3; ++c)
      EXPECT_NEAR(back->GetDirection()(r, c) * back->GetSpacing()[c], image.voxel_to_world(r, c), 1e-5);
  }
}

TEST(ItkFormNifti, DisplacementFieldsHoldTheBytesItksVectorWriterWrites) {
  TempDir dir;
  const regpipe_common::DisplacementField field = vector_field();
  using Field = itk::Image<itk::Vector<float, 3>, 3>;
  Eigen::Matrix4d grid;
  for (int i = 0; i < 16; ++i) grid(i / 4, i % 4) = field.geometry.voxel_to_world[i];
  const Field::Pointer image = itk_image_on<Field>({19, 13, 9}, grid);
  for (size_t v = 0; v < field.vectors.size() / 3; ++v)
    for (unsigned c = 0; c < 3; ++c) image->GetBufferPointer()[v][c] = field.vectors[3 * v + c];
  const std::vector<unsigned char> itk = written_by_itk<Field>(image, dir / "itk.nii");

  write_displacement_field(field, dir / "1Warp.nii");
  write_displacement_field(field, dir / "1Warp.nii.gz");
  EXPECT_EQ(file_bytes(dir / "1Warp.nii"), itk);
  EXPECT_EQ(gunzip(dir / "1Warp.nii.gz"), itk);

  // ITK's reader (as antsApplyTransforms reads a warp): the vectors written, bit for bit.
  auto reader = itk::ImageFileReader<Field>::New();
  reader->SetImageIO(itk::NiftiImageIO::New());
  reader->SetFileName((dir / "1Warp.nii.gz").string());
  reader->Update();
  const Field::PixelType* back = reader->GetOutput()->GetBufferPointer();
  size_t differing = 0;
  for (size_t v = 0; v < field.vectors.size() / 3; ++v)
    for (unsigned c = 0; c < 3; ++c) differing += back[v][c] != field.vectors[3 * v + c];
  EXPECT_EQ(differing, 0u);
}
