// gzip output compressed on several threads, as pigz does: the data is cut into chunks of
// kGzipChunkBytes, each compressed by libdeflate into a gzip member of its own, and the members
// written in order. A concatenation of members is one valid gzip file (RFC 1952 section 2.2):
// zlib's gzread (ITK, niftilib, FSL), Python's gzip (nibabel) and gzip(1) read it whole. A
// member restarts DEFLATE's 32 KiB window, which costs well under 0.1 % of the size at 1 MiB.
#pragma once

#include <cstddef>
#include <filesystem>
#include <vector>

namespace regpipe::image_detail {

// libdeflate's level 6 (its default): on chris_t1 registered (float32) it compresses as well
// as zlib's default 6 in a fraction of the time; bench/results/io_*.md has the trade-off.
constexpr int kGzipLevel = 6;
constexpr size_t kGzipChunkBytes = size_t(1) << 20;

// `size` bytes at `data` as a multi-member gzip stream, on up to `threads` threads.
std::vector<unsigned char> gzip_members(const unsigned char* data, size_t size, int level, unsigned threads);

// Writes `size` bytes at `data` gzipped at kGzipLevel to `file`. Compressions running at once
// (a batch's write-behind writers) share the machine: each runs on its caller's thread and as
// many more as are spare, hardware_concurrency - 1 spare ones in all.
// Throws UserError "cannot write '<named>': <reason>" when the file cannot be written whole.
void write_gzip_file(const std::filesystem::path& file, const unsigned char* data, size_t size,
                     const std::filesystem::path& named);
// The same, uncompressed.
void write_plain_file(const std::filesystem::path& file, const unsigned char* data, size_t size,
                      const std::filesystem::path& named);

}  // namespace regpipe::image_detail
