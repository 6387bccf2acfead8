// ITK 5.2 reads a truncated NIfTI/Analyze or MetaImage file without an error: the missing
// voxels silently become zeros (MetaIO only prints to stderr). These checks compare the
// voxel data a header promises with what the files hold, before ITK reads them. NRRD needs
// none: ITK refuses a short NRRD itself.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace regpipe::image_detail {

// Why the voxel data of `path` is incomplete ("truncated: ..."), or nullopt when it is
// complete or the format is not one checked here (ITK then reports what it finds).
std::optional<std::string> incomplete_data_reason(const std::filesystem::path& path);

struct DecompressedFile;
// The same for a single-file NIfTI (`path`, .nii or .nii.gz) whose contents are already read
// (read_decompressed): the same messages, without reading the file again.
std::optional<std::string> incomplete_data_reason(const std::filesystem::path& path,
                                                  const DecompressedFile& contents);

}  // namespace regpipe::image_detail
