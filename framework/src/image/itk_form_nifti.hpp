// NIfTI-1 files as ITK 5.2's NiftiImageIO writes them: an image without a NIfTI header of its
// own, and ANTs' displacement fields (ITK vector images, *Warp.nii.gz). Built in memory (the
// header through niftilib, as ITK makes it) and written through parallel_gzip.hpp, where ITK's
// writer would write an uncompressed .nii (niftilib's zlib, one thread, for a .nii.gz) to be
// read back and gzipped. tests/unit/nifti_one_pass_test.cpp holds the bytes to ITK's writer's.
#pragma once

#include <regpipe/host/image.hpp>

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace regpipe::image_detail {

// A grid as ITK stores it: voxel sizes, origin and an orthonormal direction (LPS).
struct ItkGrid {
  std::array<uint32_t, 3> dims{};
  Eigen::Vector3d spacing, origin;
  Eigen::Matrix3d direction;
};

// The grid `voxel_to_world` places `dims` voxels on. Throws UserError "<cannot_write>: ..." for
// a voxel size 0, or axes that are not orthogonal (ITK and NIfTI's qform would square them up).
ItkGrid itk_grid(const std::array<uint32_t, 3>& dims, const Eigen::Matrix4d& voxel_to_world,
                 const std::string& cannot_write);

// Writes `values` (one per voxel, x fastest) stored as `type` to `file` (gzipped on several
// threads when its name ends .gz): the bytes ITK writes for an itk::Image<T, 3> on `grid`.
// Errors name `path` (the file `file` becomes).
void write_itk_form_nifti(const ItkGrid& grid, VoxelType type, const std::vector<float>& values,
                          const std::filesystem::path& file, const std::filesystem::path& path);

// The same for 3 float32 components per voxel, interleaved (an itk::Image<itk::Vector<float,
// 3>, 3>): shape (nx, ny, nz, 1, 3), intent NIFTI_INTENT_VECTOR, stored component-major.
void write_itk_form_nifti_vectors(const ItkGrid& grid, const std::vector<float>& vectors,
                                  const std::filesystem::path& file, const std::filesystem::path& path);

}  // namespace regpipe::image_detail
