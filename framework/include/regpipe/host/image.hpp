// The host's image model: a 3D float32 volume with its voxel -> world (LPS mm) matrix.
#pragma once

#include <regpipe/abi.h>

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace regpipe {

// A voxel data type of image files (NIfTI's datatype, ITK's component type).
enum class VoxelType { uint8, int8, uint16, int16, uint32, int32, float32, float64 };

// "uint8", "int16", "float32", ...: the names outputs.datatype takes.
const char* voxel_type_name(VoxelType type);
std::optional<VoxelType> voxel_type_from_name(const std::string& name);
const std::vector<std::string>& voxel_type_names();

// The NIfTI header fields that an image written on this image's grid carries over, as FLIRT
// writes its output with the reference's header: both spatial transforms with their codes
// (the sform as stored, the qform as its quaternion), the description, units and display
// range. Set when the image was read from a NIfTI-1 file.
struct NiftiHeader {
  int qform_code = 0, sform_code = 0;
  std::array<float, 3> quatern_bcd{0, 0, 0}, qoffset{0, 0, 0};
  float qfac = 1.0f;
  std::array<float, 3> pixdim{1, 1, 1};
  Eigen::Matrix4d qform_ras = Eigen::Matrix4d::Identity();  // voxel -> RAS mm, from the quaternion
  Eigen::Matrix4d sform_ras = Eigen::Matrix4d::Identity();  // voxel -> RAS mm, srow_x/y/z
  std::string descrip;
  int xyz_units = 0, time_units = 0;
  float cal_min = 0.0f, cal_max = 0.0f;
};

struct Image {
  std::array<uint32_t, 3> dims{0, 0, 0};
  Eigen::Matrix4d voxel_to_world = Eigen::Matrix4d::Identity();  // LPS millimetres
  std::vector<float> data;                                       // x fastest
  // The data type of the file it was read from (float32 for an image made in memory):
  // what `outputs.datatype: moving` writes the registered image as. A NIfTI file whose
  // scl_slope/scl_inter scale its integers reads as float32 (ITK reports it so), since the
  // scaled values are not integers; 64-bit integers read as float64.
  VoxelType file_type = VoxelType::float32;
  // The NIfTI header it was read with, or that of the grid it was made on (a registered
  // image carries the reference's); written back when it is saved as NIfTI.
  std::optional<NiftiHeader> nifti;

  size_t voxel_count() const { return size_t(dims[0]) * dims[1] * dims[2]; }
  // Voxel sizes in mm (column norms of the linear part).
  Eigen::Vector3d spacing() const;
  // A borrowed ABI view; valid while this Image lives and is not modified.
  rp_image view() const;
  float at(uint32_t x, uint32_t y, uint32_t z) const {
    return data[x + size_t(dims[0]) * (y + size_t(dims[1]) * z)];
  }
};

struct ReadOptions {
  // For 4D inputs: which volume to read. Without it a 4D file is an error.
  std::optional<unsigned> volume_index;
};

// Reads NIfTI (.nii, .nii.gz), Analyze 7.5 (.hdr/.img), MetaImage (.mha/.mhd) or NRRD
// (.nrrd/.nhdr) through ITK; any scalar type becomes float32 (NIfTI scl_slope/inter applied),
// the file's type kept in file_type; orientation and anisotropic voxels are kept in
// voxel_to_world (legacy Analyze is read the way FSL reads it). A NIfTI file's voxel_to_world
// follows the NIfTI standard as FSL and nibabel read it: the sform when sform_code > 0, else
// the qform (ITK 5.2 would take the qform); when both are set and disagree by more than
// 0.01 mm over the image, a warning on stderr says so. Throws UserError naming the path and the reason: missing, not an image,
// truncated or corrupt data, vector/RGB pixels, 4D without a volume index (or one out of
// range), 2D or 5D and more.
Image read_image(const std::filesystem::path& path, const ReadOptions& options = {});

// What read_image checks from the header alone, without reading a voxel (`regpipe validate`):
// the file is an image of scalar voxels, 3D or 4D with a volume index in range. Throws
// read_image's UserErrors.
void check_image_header(const std::filesystem::path& path, const ReadOptions& options = {});

// The voxel size (mm along each index axis) ITK reads from the header (a NIfTI file's pixdim),
// without reading a voxel: enough to plan the levels while the voxels are still being read.
// read_image's voxel_to_world (the sform, say) may state it otherwise. Throws read_image's
// UserErrors about the header.
Eigen::Vector3d header_voxel_size_mm(const std::filesystem::path& path, const ReadOptions& options = {});

// Registers ITK's image formats and creates ITK's process-wide globals, once per process.
// Reading and writing call it themselves; call it before starting threads that read or write
// images, since ITK 5.2 creates those globals (and the factory list) without a lock.
void prepare_image_io();

// Writes the image as `type` (integer types: each value rounded to nearest and clamped to the
// type's range, NaN as 0) in the format named by the extension (.nii.gz, .nii, .hdr with its
// .img, .mha, .nrrd), atomically. As .nii/.nii.gz an image with a `nifti` header keeps its
// codes, qform, description, units and display range, and its sform (or, without one, its
// qform) is voxel_to_world; without one both codes are 1 (scanner), as ITK writes them.
// Written through a temporary file in the same folder, then renamed: on failure no partial
// file is left. Throws UserError naming the path: another extension, a missing or unwritable
// folder, a sheared grid where the format cannot store it (all but NIfTI with a header whose
// sform takes it), a failed write.
void write_image(const Image& image, const std::filesystem::path& path,
                 VoxelType type = VoxelType::float32);

// The volumes of an image file, all on one grid: one for a 3D file, each volume of a 4D
// series in order (the file is read once), with the step between volumes (the file's 4th
// voxel size: NIfTI's pixdim[4], a repetition time; 0 for a 3D file).
struct ImageVolumes {
  std::vector<Image> volumes;
  double volume_step = 0.0;
};

// read_image for every volume; the same errors (UserError naming the path), but a 4D file
// needs no volume index.
ImageVolumes read_image_volumes(const std::filesystem::path& path);

// write_image for a series: one volume is written as write_image writes it; several (each on
// the first one's grid, with its `nifti` header or none) as a 4D NIfTI file (.nii, .nii.gz)
// whose 4th voxel size is volume_step, atomically. Other extensions are a UserError for a
// series.
void write_image_volumes(const ImageVolumes& series, const std::filesystem::path& path,
                         VoxelType type = VoxelType::float32);

}  // namespace regpipe
