// The first NaN or infinity in a NIfTI file's float data as the file stores it. niftilib (so
// ITK, so ANTs) turns every non-finite float it reads into 0 without a word: a check that
// must see them reads the bytes itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace regpipe::image_detail {

// The index (in file order) of the first non-finite value among the `count` values of the
// NIfTI-1 file `path` (.nii or .nii.gz; a .hdr's .img), when its datatype is float32 (16) or
// float64 (64); nullopt when all are finite, for other datatypes, or when the data cannot be
// read (the reader then says why).
std::optional<uint64_t> first_stored_non_finite(const std::filesystem::path& path, uint64_t count);

}  // namespace regpipe::image_detail
