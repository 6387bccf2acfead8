#include "image/metaimage_header_checks.hpp"

#include "image/file_names.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

// MetaIO's field names are char[255].
constexpr size_t kLongestKey = 254;
// MetaIO keeps the axes in arrays of 10 (metaImage.h: m_DimSize[10]).
constexpr long kMostAxes = 10;

std::string trimmed(const std::string& s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}


}  // namespace

std::optional<std::string> metaimage_header_problem(const fs::path& path) {
  if (!name_ends_with_any(path, {".mha", ".mhd"})) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  // As MetaIO reads: a key up to '=', its value up to the line's end; the voxels follow
  // ElementDataFile.
  for (int field = 1; in; ++field) {
    std::string key, value;
    std::getline(in, key, '=');
    if (!in) return std::nullopt;
    key = trimmed(key.substr(0, key.find('\0')));  // MetaIO compares keys as C strings
    // Every header line is "key = value": a line without '=' (read here as part of the next
    // key) is not MetaImage, and MetaIO would read a field of its own out of it.
    if (key.find('\n') != std::string::npos)
      return "field " + std::to_string(field) + " of its header ('" + trimmed(key.substr(0, key.find('\n'))).substr(0, 40) +
             "') has no '='; is it a MetaImage header?";
    if (key.size() > kLongestKey)
      return "field " + std::to_string(field) + " of its header has a " + std::to_string(key.size()) +
             "-character name (MetaImage names are at most " + std::to_string(kLongestKey) +
             "); is it a MetaImage header?";
    std::getline(in, value);
    if (key == "NDims") {
      long axes = 0;
      if (!(std::istringstream(value) >> axes) || axes < 1 || axes > kMostAxes)
        return "NDims is '" + trimmed(value).substr(0, 40) + "'; MetaImage files have 1 to " +
               std::to_string(kMostAxes) + " axes";
    }
    if (key == "ElementDataFile") {
      // Slice lists and file-name patterns: MetaIO crashes (SIGSEGV) or throws on malformed ones,
      // and regpipe's volumes come in one data file.
      const std::string file = trimmed(value);
      if (file.rfind("LIST", 0) == 0 || file.find('%') != std::string::npos)
        return "its voxels are in a list or pattern of files (ElementDataFile = " + file.substr(0, 40) +
               "); regpipe reads MetaImage voxels from one file (LOCAL or a file name)";
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace regpipe::image_detail
