// niftilib's nifti_image owned, and a single-file NIfTI-1 written from memory with its header:
// what write_nifti (nifti_header.hpp: a header of the image's own) and itk_form_nifti.hpp
// (ITK's form) share.
#pragma once

#include "image/file_names.hpp"
#include "image/parallel_gzip.hpp"

#include <nifti1_io.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

namespace regpipe::image_detail {

struct NiftiFree {
  void operator()(nifti_image* nim) const { nifti_image_free(nim); }
};
using NiftiPtr = std::unique_ptr<nifti_image, NiftiFree>;

// The file's bytes for `nim` (its voxel offset set), zero: the caller stores the voxels after
// nim.iname_offset.
inline std::vector<unsigned char> nifti_file_buffer(const nifti_image& nim) {
  return std::vector<unsigned char>(size_t(nim.iname_offset) + size_t(nim.nvox) * size_t(nim.nbyper), 0);
}

// `bytes` with the header niftilib makes of `nim` in front (the bytes nifti_image_write writes),
// to `file`: gzipped on several threads where its name ends .gz. Errors name `path`.
inline void write_with_header(const nifti_image& nim, std::vector<unsigned char>& bytes,
                              const std::filesystem::path& file, const std::filesystem::path& path) {
  const nifti_1_header header = nifti_convert_nim2nhdr(&nim);
  std::memcpy(bytes.data(), &header, sizeof(header));
  if (ends_with_any(file.string(), {".gz"}))
    write_gzip_file(file, bytes.data(), bytes.size(), path);
  else
    write_plain_file(file, bytes.data(), bytes.size(), path);
}

}  // namespace regpipe::image_detail
