// Transform files: FSL FLIRT .mat, ITK .tfm, and a plain world 4x4 (RAS). All writes are
// atomic (temporary file + rename). `ref_to_mov` is the abi.h convention: reference LPS
// world -> moving LPS world.
#pragma once

#include <regpipe/host/image.hpp>

#include <Eigen/Core>
#include <filesystem>

namespace regpipe {

// FLIRT's matrix maps moving (input) "scaled voxel" coordinates to reference scaled voxel
// coordinates: voxel index times voxel size, with x mirrored (nx-1-i) when the image's
// voxel->world determinant is positive (FSL's radiological convention).
Eigen::Matrix4d to_fsl_matrix(const Eigen::Matrix4d& ref_to_mov, const Image& reference,
                              const Image& moving);
Eigen::Matrix4d from_fsl_matrix(const Eigen::Matrix4d& fsl, const Image& reference,
                                const Image& moving);

// Plain 4x4 in RAS world (NIfTI/scanner mm) mapping MOVING world to REFERENCE world: the
// forward transform, the direction of FLIRT's .mat, for applying to points.
Eigen::Matrix4d to_world_ras_forward(const Eigen::Matrix4d& ref_to_mov);
Eigen::Matrix4d from_world_ras_forward(const Eigen::Matrix4d& forward_ras);

void write_fsl_mat(const std::filesystem::path& path, const Eigen::Matrix4d& fsl);
void write_world_matrix(const std::filesystem::path& path, const Eigen::Matrix4d& m);
// ITK AffineTransform_double_3_3 (fixed = reference, LPS): exactly ref_to_mov.
void write_itk_tfm(const std::filesystem::path& path, const Eigen::Matrix4d& ref_to_mov);

// Reads a whitespace-separated 4x4 (FSL .mat or the world matrix file). Throws UserError.
Eigen::Matrix4d read_matrix_file(const std::filesystem::path& path);
Eigen::Matrix4d read_itk_tfm(const std::filesystem::path& path);

}  // namespace regpipe
