// A file's contents in memory as zlib's gzread gives them (ITK's and niftilib's readers read
// through it): a gzip stream decompressed, every member of a multi-member one (pigz's and
// regpipe's own output), bytes after the last member that do not start another ignored; any
// other file as it is. One pass: libdeflate inflates each member whole, several times as fast
// as zlib's streaming; where it refuses the data, zlib reads the file again so that damage is
// reported in zlib's words and nothing zlib accepts is refused.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace regpipe::image_detail {

struct DecompressedFile {
  std::unique_ptr<unsigned char[]> bytes;  // the first `kept` bytes of the contents
  uint64_t kept = 0;
  uint64_t size = 0;  // the whole contents' length (may exceed kept, see read_decompressed)
  bool gzipped = false;
  // zlib's complaint about a corrupt or truncated stream ("incorrect data check",
  // "unexpected end of file"): the contents then end where it stopped.
  std::optional<std::string> damage;
};

// `path`'s contents, of which the caller needs `needed` bytes: more are kept only while they
// fit in twice that (a stream that inflates far beyond what its header promised is counted,
// not held). Nothing when the file cannot be opened or read.
std::optional<DecompressedFile> read_decompressed(const std::filesystem::path& path, uint64_t needed);

}  // namespace regpipe::image_detail
