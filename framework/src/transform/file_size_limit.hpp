// Transform files are small: a matrix is a few hundred bytes. A file far larger (an image or a
// log given by mistake, or a hostile one) is refused by its size before it is read into
// memory.
#pragma once

#include <cstdint>
#include <filesystem>

namespace regpipe::transform_detail {

// A 4x4 matrix as text (FSL's .mat, the world matrix): room for long numbers and comments.
constexpr uintmax_t kMatrixTextMaxBytes = uintmax_t(64) << 10;
// ITK's files (text, MATLAB, HDF5): one affine is under 1 KB; room for the larger transforms
// (B-splines) that the reader then names and refuses.
constexpr uintmax_t kItkFileMaxBytes = uintmax_t(64) << 20;

// Throws UserError "cannot read transform '<path>': it is N bytes; ..." when `path` is larger
// than `limit`. `kind` names what the file should be ("4x4 matrix file").
void require_size_at_most(const std::filesystem::path& path, uintmax_t limit, const char* kind);

}  // namespace regpipe::transform_detail
