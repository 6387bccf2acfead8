// A file's bytes, and a .nii.gz's decompressed (regpipe's one-pass inflater), for tests that
// compare written files byte for byte.
#pragma once

#include "image/decompressed_file.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace regpipe::test {

inline std::vector<unsigned char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

inline std::vector<unsigned char> gunzip(const std::filesystem::path& path) {
  const auto contents = image_detail::read_decompressed(path, uint64_t(1) << 30);
  if (!contents || contents->damage) throw std::runtime_error("cannot gunzip " + path.string());
  return std::vector<unsigned char>(contents->bytes.get(), contents->bytes.get() + contents->kept);
}

}  // namespace regpipe::test
