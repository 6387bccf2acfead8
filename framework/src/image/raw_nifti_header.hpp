// The 348 bytes of a NIfTI-1 or Analyze 7.5 header as the file stores them, read by byte
// offset (nifti1.h). niftilib and ITK repair some fields silently (a pixdim of 0 becomes 1)
// and abort on others (vnl on a non-finite matrix): the checks that must see what the file
// says read it here, before either library does.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace regpipe::image_detail {

// Byte offsets of the fields regpipe checks.
namespace nifti_offset {
constexpr size_t dim = 40, intent_code = 68, datatype = 70, bitpix = 72, pixdim = 76, vox_offset = 108,
                 qform_code = 252, sform_code = 254, quatern_b = 256, srow_x = 280, magic = 344;
}

class RawNiftiHeader {
 public:
  // The first 348 bytes of `header_file` (plain or gzipped); nullopt when it is shorter. The
  // byte order is the one in which sizeof_hdr reads 348, or failing that (a damaged header)
  // the one in which dim[0] reads 1..7, as niftilib decides it.
  static std::optional<RawNiftiHeader> read(const std::filesystem::path& header_file);
  // The same from a file's first `size` bytes, already in memory (and decompressed).
  static std::optional<RawNiftiHeader> parse(const unsigned char* bytes, size_t size);

  // 348 in a NIfTI-1 or Analyze 7.5 header.
  int32_t sizeof_hdr() const { return field<int32_t>(0); }

  // The field at `offset` in the file's byte order.
  template <class T>
  T field(size_t offset) const;
  // dim[i], pixdim[i]: i = 0 is the rank (dim) or qfac (pixdim), 1..7 the axes.
  int dim(int i) const;
  float pixdim(int i) const;
  // The magic field up to its first NUL ("n+1", "ni1"; Analyze 7.5 has none).
  std::string magic() const;

 private:
  RawNiftiHeader() = default;
  std::array<char, 348> bytes_{};
  bool swap_ = false;
};

// The other file of an Analyze/NIfTI pair named `path` (x.hdr <-> x.img, also .gz, the case
// kept): `member` is "hdr" or "img".
std::filesystem::path pair_member(const std::filesystem::path& path, const std::string& member);

// Whether `path` is named as a NIfTI-1 or Analyze 7.5 file: one file (.nii, .nii.gz), or
// one of a pair (.hdr, .img, also gzipped).
bool is_single_nifti_name(const std::filesystem::path& path);
bool is_nifti_pair_name(const std::filesystem::path& path);

}  // namespace regpipe::image_detail
