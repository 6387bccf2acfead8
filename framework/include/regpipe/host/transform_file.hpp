// A transform file in any format regpipe knows, read into and written from the abi.h
// direction (ref_to_mov: reference LPS world -> moving LPS world). Every format holds a
// registration of a "moving" image onto a "reference" image (docs/coordinates.md):
//   fsl    FLIRT's text .mat: moving (-in) scaled voxels -> reference scaled voxels; needs both
//          images' grids;
//   itk    ITK's files through ITK: .tfm/.txt text, .mat MATLAB v4 binary (ANTs' affine,
//          0GenericAffine.mat), .h5/.hdf5; ref_to_mov itself;
//   world  4x4 text, moving RAS world -> reference RAS world (transform_world.txt).
#pragma once

#include <regpipe/host/image.hpp>

#include <Eigen/Core>
#include <filesystem>
#include <string>

namespace regpipe {

enum class TransformFormat { Fsl, Itk, World };

// "fsl", "itk", "ants" (ITK's files: ANTs reads and writes them), "world". UserError otherwise.
TransformFormat parse_transform_format(const std::string& name);
const char* format_name(TransformFormat format);

// The format of an existing file: .tfm, .h5, .hdf5 are ITK's; .mat is FSL's when it is text and
// ITK's (MATLAB binary) otherwise; .txt is ITK's when it starts "#Insight Transform File" and a
// world matrix otherwise. Any other extension is a UserError asking for the format.
TransformFormat detect_transform_format(const std::filesystem::path& path);
// The format of a file to write: .tfm, .h5, .hdf5 ITK; .txt world. .mat (FSL or ANTs?) and
// other extensions are a UserError asking for the format.
TransformFormat output_transform_format(const std::filesystem::path& path);

// The images an FSL matrix relates: FLIRT's -in (moving) and -ref. Only their grids are used.
struct FslImages {
  const Image* moving = nullptr;
  const Image* reference = nullptr;
};

// Reads `path` as `format` into ref_to_mov. FSL files need both images. Every problem
// (unreadable, malformed, singular, images missing) is a UserError naming the file.
Eigen::Matrix4d read_transform(const std::filesystem::path& path, TransformFormat format,
                               const FslImages& images = {});
// Writes ref_to_mov to `path` as `format`, atomically; FSL files need both images.
void write_transform(const std::filesystem::path& path, TransformFormat format,
                     const Eigen::Matrix4d& ref_to_mov, const FslImages& images = {});

}  // namespace regpipe
