// Sanity of a NIfTI-1 or Analyze 7.5 header before niftilib and ITK read it: they accept a
// wrong magic, a zero, NaN or negative voxel size (made 1), a vox_offset outside the file,
// a bitpix that contradicts the datatype, and abort (vnl) on a non-finite qform or sform.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace regpipe::image_detail {

// What is wrong with the header of `path` (.nii, .nii.gz, .hdr/.img, also gzipped), naming
// the field and its value: "wrong magic 'n+2' (a .nii file starts its data with 'n+1')".
// nullopt when it is sound, or when the file is no NIfTI-1/Analyze header at all (ITK then
// says what it is not).
std::optional<std::string> nifti_header_problem(const std::filesystem::path& path);

}  // namespace regpipe::image_detail
