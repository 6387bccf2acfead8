// Transform files: FSL FLIRT .mat, ITK's (.tfm, ANTs' binary .mat, .h5), and a plain world 4x4
// (RAS). All writes are atomic (temporary file + rename). `ref_to_mov` is the abi.h convention: reference LPS
// world -> moving LPS world.
#pragma once

#include <regpipe/host/image.hpp>

#include <Eigen/Core>
#include <filesystem>
#include <string>

namespace regpipe {

// The inverse of `m`; a UserError "<what> is singular and cannot be inverted" when it has none.
Eigen::Matrix4d checked_inverse(const Eigen::Matrix4d& m, const std::string& what);

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
// ITK transform files through ITK's own transform IO, the file type chosen by the extension:
// .tfm or .txt (ITK's text), .mat (MATLAB v4 binary, as ANTs writes 0GenericAffine.mat),
// .h5 or .hdf5. ITK's transform maps fixed (reference) LPS points to moving LPS points:
// exactly ref_to_mov. Written as AffineTransform_double_3_3 with centre 0.
void write_itk_transform(const std::filesystem::path& path, const Eigen::Matrix4d& ref_to_mov);
// Reads a file that holds exactly one 3D matrix-offset transform (AffineTransform,
// Euler3DTransform, VersorRigid3DTransform, Similarity3DTransform, ScaleSkewVersor3DTransform,
// CenteredAffineTransform, ..., double or float), its centre folded in. Several transforms, a
// composite, a displacement field or a B-spline are a UserError naming the file and what it
// holds.
Eigen::Matrix4d read_itk_transform(const std::filesystem::path& path);
// Whether ITK's transform IO knows the extension (.tfm, .txt, .mat, .h5, .hdf5; case as ITK).
bool has_itk_transform_extension(const std::filesystem::path& path);
// Whether the file starts as ITK's text transform files do ("#Insight Transform File").
bool is_itk_text_transform(const std::filesystem::path& path);
// Registers ITK's transform file types and transform classes once per process, after ITK's
// globals (prepare_image_io). Reading and writing call it themselves; call it before starting
// threads that read or write transforms or images, since ITK 5.2 changes its factory lists
// without a lock.
void prepare_transform_io();

// Reads a whitespace-separated 4x4 (FSL .mat or the world matrix file). Throws UserError.
Eigen::Matrix4d read_matrix_file(const std::filesystem::path& path);

}  // namespace regpipe
