// ITK's NIfTI writers gzip through niftilib's zlib on one thread (0.44 s of a 1 s `regpipe run`
// on an H100, issue 17). Here they write the uncompressed .nii instead, next to the .nii.gz
// temporary, and write_gzip_file compresses it on several threads into that temporary.
#pragma once

#include <filesystem>
#include <functional>

namespace regpipe::image_detail {

// Calls write(file), or where `file` (a temporary that becomes `path`) ends .nii.gz,
// write(<file without .gz>) and then gzips that into `file` and removes it. `write` checks
// what it wrote; errors name `path`.
void write_gzipped_after(const std::filesystem::path& file, const std::filesystem::path& path,
                         const std::function<void(const std::filesystem::path& target)>& write);

}  // namespace regpipe::image_detail
