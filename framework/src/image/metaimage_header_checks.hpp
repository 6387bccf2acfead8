// A MetaImage header that ITK 5.2's MetaIO would overflow a buffer on or hang on. MetaIO starts
// a field name at a line's start and ends it at the first '=' or ':'; it copies the name, and
// the value of a text field (Comment, Name, ElementType, ...), into 255 bytes with strcpy, so a
// long one corrupts memory (glibc's fortify check aborts the process). It reads NDims numbers
// for every per-axis field, so an NDims of billions spins for hours; and it crashes on
// malformed slice lists (ElementDataFile = LIST ...), which regpipe does not take.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <variant>

namespace regpipe::image_detail {

// A MetaImage header's fields as MetaIO reads them, up to ElementDataFile (values trimmed of
// blanks; a later field of the same name replaces an earlier one, as in MetaIO), and the
// offset of the byte after that field's line, where LOCAL voxels start.
struct MetaImageHeader {
  std::map<std::string, std::string> fields;
  std::uint64_t data_offset = 0;
};

// The header of `path`, or what is wrong with it (see above).
std::variant<MetaImageHeader, std::string> read_metaimage_header(const std::filesystem::path& path);

// What is wrong with the MetaImage header of `path` (.mha, .mhd), or nullopt.
std::optional<std::string> metaimage_header_problem(const std::filesystem::path& path);

}  // namespace regpipe::image_detail
