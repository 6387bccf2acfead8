// Displacement-field files read through ITK's own NIfTI IO (itk::Image<itk::Vector<float, 3>,
// 3>), the reader antsRegistration and antsApplyTransforms use, and written in the bytes its
// writer writes, from memory (itk_form_nifti.hpp: gzipped on several threads). The header is checked
// byte by byte first: ITK 5.2 reads a 5D file that is not in the vector form as a scalar image
// and, for a field with several time points, corrupts the heap (measured: munmap_chunk()).
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/displacement_field_io.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/input_file.hpp>

#include "image/data_completeness.hpp"
#include "image/file_grid_checks.hpp"
#include "image/itk_file_grid.hpp"
#include "image/itk_form_nifti.hpp"
#include "image/nifti_header.hpp"
#include "image/nifti_header_checks.hpp"
#include "image/raw_nifti_header.hpp"
#include "image/stored_non_finite.hpp"
#include "io/itk_message.hpp"

// As in image_io.cpp: ITK's bundled Eigen must not meet the system Eigen that image.hpp brings.
#define ITK_USE_SYSTEM_EIGEN
#include <itkImage.h>
#include <itkImageFileReader.h>
#include <itkNiftiImageIO.h>
#include <itkVector.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <string>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

using FieldImage = itk::Image<itk::Vector<float, 3>, 3>;
using regpipe_common::DisplacementField;

constexpr int kIntentVector = 1007;  // NIFTI_INTENT_VECTOR
constexpr int kIntentDispVect = 1006;
constexpr int kFloat32 = 16, kFloat64 = 64;  // NIfTI datatype codes

// What a field file is, for messages that say what was found instead.
constexpr const char* kFieldForm =
    "a displacement field is a NIfTI vector image as ITK and ANTs write it (*Warp.nii.gz): "
    "shape (nx, ny, nz, 1, 3), intent code 1007 (NIFTI_INTENT_VECTOR), float32";

UserError read_error(const fs::path& path, const std::string& reason) {
  return UserError("cannot read displacement field '" + path.string() + "': " + reason);
}

UserError write_error(const fs::path& path, const std::string& reason) {
  return UserError("cannot write displacement field '" + path.string() + "': " + reason);
}

std::string reason_of(const itk::ExceptionObject& e) {
  const std::string text = readable_itk_description(e.GetDescription());
  return text.empty() ? "ITK could not read or write it" : text;
}

std::string shape_of(const image_detail::RawNiftiHeader& h) {
  std::string text;
  const int rank = std::clamp(h.dim(0), 1, 7);
  for (int d = 1; d <= rank; ++d) text += (d == 1 ? "" : "x") + std::to_string(h.dim(d));
  return text;
}

std::string intent_name(int code) {
  switch (code) {
    case 0: return "0 (none)";
    case kIntentDispVect: return "1006 (NIFTI_INTENT_DISPVECT)";
    case kIntentVector: return "1007 (NIFTI_INTENT_VECTOR)";
    default: return std::to_string(code);
  }
}

// The checks ITK cannot be trusted with: the file's shape, intent and data type as stored.
void require_field_header(const image_detail::RawNiftiHeader& h, const fs::path& path) {
  const int rank = h.dim(0);
  if (rank <= 4) {
    const bool four_d_of_three = rank == 4 && h.dim(4) == 3;
    throw read_error(path, "it is a " + std::to_string(rank) + "D scalar image (" + shape_of(h) + ")" +
                               (four_d_of_three ? ", its 3 values per voxel on the 4th (time) axis"
                                                : "") +
                               ", not a displacement field; " + kFieldForm);
  }
  for (int d = 6; d <= std::min(rank, 7); ++d)
    if (h.dim(d) != 1)
      throw read_error(path, "it is a " + std::to_string(rank) + "D image (" + shape_of(h) +
                                 "), not a displacement field; " + kFieldForm);
  if (h.dim(5) != 3)
    throw read_error(path, "it holds " + std::to_string(h.dim(5)) + " component" +
                               (h.dim(5) == 1 ? "" : "s") + " per voxel (shape " + shape_of(h) +
                               "); a 3D displacement field has 3 (x, y, z)");
  if (h.dim(4) != 1)
    throw read_error(path, "it holds " + std::to_string(h.dim(4)) + " fields, one per time point (shape " +
                               shape_of(h) + "); a displacement field has one: shape (nx, ny, nz, 1, 3)");
  const int intent = h.field<int16_t>(image_detail::nifti_offset::intent_code);
  if (intent != kIntentVector)
    throw read_error(path, "its intent code is " + intent_name(intent) +
                               "; ITK and ANTs read a displacement field only with intent code 1007 "
                               "(NIFTI_INTENT_VECTOR), and read this file as a 5D scalar image. "
                               "Set it (nibabel: img.header.set_intent('vector'))");
  const int datatype = h.field<int16_t>(image_detail::nifti_offset::datatype);
  if (datatype != kFloat32 && datatype != kFloat64)
    throw read_error(path, "its data type is NIfTI code " + std::to_string(datatype) +
                               "; displacement fields are float32 (ANTs' form) or float64");
}

FieldImage::Pointer read_with_itk(const fs::path& path) {
  itk::NiftiImageIO::Pointer io;
  {
    // ITK 5.2's NiftiImageIO keeps header state in statics (image_detail::header_mutex).
    std::lock_guard<std::mutex> lock(image_detail::header_mutex());
    io = itk::NiftiImageIO::New();
    io->SetFileName(path.string());
    io->ReadImageInformation();
  }
  // Whatever the header said, ITK must see a 3-vector: anything else would be converted.
  if (io->GetPixelType() != itk::IOPixelEnum::VECTOR || io->GetNumberOfComponents() != 3)
    throw read_error(path, "ITK reads its voxels as " +
                               itk::ImageIOBase::GetPixelTypeAsString(io->GetPixelType()) + " with " +
                               std::to_string(io->GetNumberOfComponents()) + " components; " + kFieldForm);
  if (const auto problem = image_detail::file_grid_problem(image_detail::file_grid(*io), io->GetNumberOfDimensions()))
    throw read_error(path, *problem);
  auto reader = itk::ImageFileReader<FieldImage>::New();
  reader->SetImageIO(io);
  reader->SetFileName(path.string());
  {
    std::lock_guard<std::mutex> lock(image_detail::header_mutex());
    reader->UpdateOutputInformation();
  }
  reader->Update();
  return reader->GetOutput();
}

// The grid as read_image places an image: ITK's reading, then the NIfTI standard's sform rule.
Eigen::Matrix4d placed_grid(const FieldImage& image, const std::array<uint32_t, 3>& dims,
                            const fs::path& path) {
  Image grid;
  grid.dims = dims;
  for (unsigned r = 0; r < 3; ++r) {
    for (unsigned c = 0; c < 3; ++c)
      grid.voxel_to_world(r, c) = image.GetDirection()(r, c) * image.GetSpacing()[c];
    grid.voxel_to_world(r, 3) = image.GetOrigin()[r];
  }
  image_detail::apply_nifti_header(grid, path);
  if (!grid.voxel_to_world.allFinite() ||
      !(std::abs(grid.voxel_to_world.topLeftCorner<3, 3>().determinant()) > 0.0))
    throw read_error(path, "its voxel-to-world matrix is singular or not finite");
  return grid.voxel_to_world;
}

}  // namespace

bool is_nifti_file(const fs::path& path) {
  if (input_file_problem(path)) return false;
  const auto header = image_detail::RawNiftiHeader::read(path);
  if (!header || header->sizeof_hdr() != 348) return false;
  const std::string magic = header->magic();
  return magic == "n+1" || magic == "ni1";
}

DisplacementField read_displacement_field(const fs::path& path) {
  if (const auto problem = input_file_problem(path)) throw read_error(path, *problem);
  if (!image_detail::is_single_nifti_name(path))
    throw read_error(path, "ITK's NIfTI reader (as ANTs') takes only names that end .nii.gz or .nii; "
                           "name it .nii.gz or .nii");
  const auto header = image_detail::RawNiftiHeader::read(path);
  if (!header || header->sizeof_hdr() != 348 || (header->magic() != "n+1" && header->magic() != "ni1"))
    throw read_error(path, std::string("it is not a NIfTI-1 file; ") + kFieldForm);
  if (const auto problem = image_detail::nifti_header_problem(path)) throw read_error(path, *problem);
  require_field_header(*header, path);
  if (const auto reason = image_detail::incomplete_data_reason(path)) throw read_error(path, *reason);

  prepare_image_io();  // ITK's globals, once, before any reader
  FieldImage::Pointer image;
  try {
    image = read_with_itk(path);
  } catch (const itk::ExceptionObject& e) {
    throw read_error(path, reason_of(e));
  }

  const auto size = image->GetLargestPossibleRegion().GetSize();
  std::array<uint32_t, 3> dims{};
  for (unsigned d = 0; d < 3; ++d) dims[d] = static_cast<uint32_t>(size[d]);
  const Eigen::Matrix4d voxel_to_world = placed_grid(*image, dims, path);

  DisplacementField field;
  field.geometry.dims = {int(dims[0]), int(dims[1]), int(dims[2])};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) field.geometry.voxel_to_world[4 * r + c] = voxel_to_world(r, c);
  const size_t voxels = size_t(dims[0]) * dims[1] * dims[2];
  field.vectors.resize(3 * voxels);
  const FieldImage::PixelType* pixels = image->GetBufferPointer();
  for (size_t i = 0; i < voxels; ++i)
    for (unsigned c = 0; c < 3; ++c) field.vectors[3 * i + c] = pixels[i][c];
  // niftilib reads a NaN or infinity as 0: look at the stored values, then at what was read.
  std::optional<uint64_t> bad = image_detail::first_stored_non_finite(path, field.vectors.size());
  if (!bad) {
    for (size_t i = 0; i < field.vectors.size() && !bad; ++i)
      if (!std::isfinite(field.vectors[i])) bad = (i % 3) * voxels + i / 3;  // as stored: component-major
  }
  if (bad) {
    const size_t voxel = *bad % voxels, component = *bad / voxels, x = voxel % dims[0],
                 y = voxel / dims[0] % dims[1], z = voxel / dims[0] / dims[1];
    throw read_error(path, "its vector at voxel (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                               std::to_string(z) + ") has a " + "xyz"[component] +
                               " component that is NaN or infinite (ITK and ANTs would read it as 0 "
                               "without a word); a displacement field's vectors are finite millimetres");
  }
  return field;
}

void write_displacement_field(const DisplacementField& field, const fs::path& path) {
  if (!image_detail::is_single_nifti_name(path))
    throw write_error(path, "displacement fields are written as NIfTI, as ITK and ANTs write "
                            "them; name it .nii.gz (ANTs: *Warp.nii.gz) or .nii");
  const regpipe_common::Grid& g = field.geometry.dims;
  if (g.nx < 1 || g.ny < 1 || g.nz < 1)
    throw write_error(path, "its grid " + std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" +
                                std::to_string(g.nz) + " is empty");
  const size_t voxels = regpipe_common::voxel_count(g);
  if (field.vectors.size() != 3 * voxels)
    throw write_error(path, "it holds " + std::to_string(field.vectors.size()) + " floats; its " +
                                std::to_string(voxels) + " voxels need 3 each");
  for (const float v : field.vectors)
    if (!std::isfinite(v)) throw write_error(path, "a vector component is " + std::to_string(v));

  Eigen::Matrix4d voxel_to_world;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) voxel_to_world(r, c) = field.geometry.voxel_to_world[4 * r + c];
  const image_detail::ItkGrid grid = image_detail::itk_grid(
      {uint32_t(g.nx), uint32_t(g.ny), uint32_t(g.nz)}, voxel_to_world,
      "cannot write displacement field '" + path.string() + "'");
  write_atomically(path, [&](const fs::path& tmp) {
    image_detail::write_itk_form_nifti_vectors(grid, field.vectors, tmp, path);
  });
}

}  // namespace regpipe
