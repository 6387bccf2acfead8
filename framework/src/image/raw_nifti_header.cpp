#include "image/raw_nifti_header.hpp"

#include "image/byte_order.hpp"
#include "image/file_names.hpp"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace fs = std::filesystem;

namespace regpipe::image_detail {

std::optional<RawNiftiHeader> RawNiftiHeader::read(const fs::path& header_file) {
  std::array<unsigned char, 348> bytes;
  gzFile file = gzopen(header_file.c_str(), "rb");  // zlib reads plain files as they are
  if (file == nullptr) return std::nullopt;
  const int got = gzread(file, bytes.data(), unsigned(bytes.size()));
  gzclose(file);
  return parse(bytes.data(), got < 0 ? 0 : size_t(got));
}

std::optional<RawNiftiHeader> RawNiftiHeader::parse(const unsigned char* bytes, size_t size) {
  RawNiftiHeader header;
  if (size < header.bytes_.size()) return std::nullopt;
  std::memcpy(header.bytes_.data(), bytes, header.bytes_.size());
  for (const bool swap : {false, true}) {
    header.swap_ = swap;
    if (header.sizeof_hdr() == 348) return header;
  }
  header.swap_ = false;
  header.swap_ = header.dim(0) < 1 || header.dim(0) > 7;
  return header;
}

template <class T>
T RawNiftiHeader::field(size_t offset) const {
  return load_ordered<T>(reinterpret_cast<const unsigned char*>(&bytes_[offset]), swap_);
}
template int16_t RawNiftiHeader::field<int16_t>(size_t) const;
template int32_t RawNiftiHeader::field<int32_t>(size_t) const;
template float RawNiftiHeader::field<float>(size_t) const;

int RawNiftiHeader::dim(int i) const { return field<int16_t>(nifti_offset::dim + 2 * size_t(i)); }

float RawNiftiHeader::pixdim(int i) const { return field<float>(nifti_offset::pixdim + 4 * size_t(i)); }

std::string RawNiftiHeader::magic() const {
  const char* magic = &bytes_[nifti_offset::magic];
  return std::string(magic, strnlen(magic, 4));
}

fs::path pair_member(const fs::path& path, const std::string& member) {
  std::string name = path.filename().string();
  const size_t at = name.size() - (ends_with_any(name, {".gz"}) ? 6 : 3);
  const bool upper = std::isupper(static_cast<unsigned char>(name[at])) != 0;
  for (size_t i = 0; i < 3; ++i)
    name[at + i] = upper ? char(std::toupper(static_cast<unsigned char>(member[i]))) : member[i];
  return path.parent_path() / name;
}

bool is_single_nifti_name(const fs::path& path) { return name_ends_with_any(path, {".nii", ".nii.gz"}); }

bool is_nifti_pair_name(const fs::path& path) {
  return name_ends_with_any(path, {".hdr", ".hdr.gz", ".img", ".img.gz"});
}

}  // namespace regpipe::image_detail
