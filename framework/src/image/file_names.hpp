// File-name tests the image readers share: formats are told by extension, in any case.
#pragma once

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <string>

namespace regpipe::image_detail {

inline std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Whether `text`, lowercased, ends with one of `suffixes` (given in lowercase).
inline bool ends_with_any(const std::string& text, std::initializer_list<const char*> suffixes) {
  const std::string lower = lowercase(text);
  return std::any_of(suffixes.begin(), suffixes.end(), [&](const char* suffix) {
    const std::string s(suffix);
    return lower.size() >= s.size() && lower.compare(lower.size() - s.size(), s.size(), s) == 0;
  });
}

inline bool name_ends_with_any(const std::filesystem::path& path, std::initializer_list<const char*> suffixes) {
  return ends_with_any(path.filename().string(), suffixes);
}

}  // namespace regpipe::image_detail
