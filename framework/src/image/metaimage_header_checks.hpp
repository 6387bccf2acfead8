// A MetaImage header that ITK 5.2's MetaIO would overflow a buffer on or hang on: MetaIO reads
// each key up to the next '=' (across line breaks) and copies it into a 255-byte field name
// with strcpy, so a long key corrupts memory (glibc's fortify check aborts the process); and it
// reads NDims numbers for every per-axis field, so an NDims of billions spins for hours; and it
// crashes on malformed slice lists (ElementDataFile = LIST ...), which regpipe does not take.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace regpipe::image_detail {

// What is wrong with the MetaImage header of `path` (.mha, .mhd), or nullopt.
std::optional<std::string> metaimage_header_problem(const std::filesystem::path& path);

}  // namespace regpipe::image_detail
