// The one check every file regpipe reads whole goes through first (pipelines, images,
// transforms): that it is a regular, readable file of a sane size. A FIFO, a device or a
// socket would block a reader or never end (/dev/zero), a folder reads as nothing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>

namespace regpipe {

// Why `path` cannot be read as an input file, or nothing: "no such file", "it is a folder",
// "it is a FIFO (named pipe), not a file", a device or socket, not readable, or larger than
// `max_bytes`.
std::optional<std::string> input_file_problem(const std::filesystem::path& path,
                                              std::uintmax_t max_bytes = std::numeric_limits<std::uintmax_t>::max());

}  // namespace regpipe
