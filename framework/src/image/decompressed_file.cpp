#include "image/decompressed_file.hpp"

#include "io/populate_pages.hpp"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

bool starts_member(const unsigned char* at, size_t left) { return left >= 2 && at[0] == 0x1f && at[1] == 0x8b; }

// The file as it is.
std::optional<DecompressedFile> read_raw(const fs::path& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);  // input_file_problem refused all but regular files
  if (!file || ec) return std::nullopt;
  DecompressedFile out;
  out.bytes.reset(new unsigned char[std::max<uintmax_t>(size, 1)]);
  out.size = out.kept = std::fread(out.bytes.get(), 1, size, file.get());
  if (std::ferror(file.get())) return std::nullopt;
  return out;
}

// Every member with libdeflate into one buffer, growing it (up to `limit`) where a member
// does not fit. Nothing where a member is damaged or the contents would pass `limit`.
std::optional<DecompressedFile> inflate_members(const unsigned char* in, size_t in_size, uint64_t capacity,
                                                uint64_t limit) {
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> inflater(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!inflater) throw std::bad_alloc();
  DecompressedFile out;
  out.gzipped = true;
  // DEFLATE inflates at most 1032:1: a header's promise cannot make this allocate more.
  capacity = std::min({std::max<uint64_t>(capacity, 1), limit, 1032 * uint64_t(in_size) + 1024});
  out.bytes.reset(new unsigned char[capacity]);
  populate_pages(out.bytes.get(), capacity);  // the inflater, one thread, then does not fault them in
  size_t at = 0;
  while (starts_member(in + at, in_size - at)) {
    size_t used = 0, made = 0;
    const libdeflate_result result =
        libdeflate_gzip_decompress_ex(inflater.get(), in + at, in_size - at, out.bytes.get() + out.size,
                                      capacity - out.size, &used, &made);
    if (result == LIBDEFLATE_SUCCESS) {
      at += used;
      out.size += made;
      continue;
    }
    if (result != LIBDEFLATE_INSUFFICIENT_SPACE || capacity == limit) return std::nullopt;
    capacity = std::min(limit, 2 * capacity);
    std::unique_ptr<unsigned char[]> grown(new unsigned char[capacity]);
    std::memcpy(grown.get(), out.bytes.get(), out.size);
    out.bytes = std::move(grown);
  }
  out.kept = out.size;
  return out;
}

// zlib's streaming read, as ITK's readers do it: keeps the first `limit` bytes, counts the rest.
std::optional<DecompressedFile> inflate_with_zlib(const fs::path& path, uint64_t limit) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzopen(path.c_str(), "rb"), &gzclose);
  if (!gz) return std::nullopt;
  DecompressedFile out;
  out.gzipped = true;
  std::vector<unsigned char> kept;
  std::vector<unsigned char> chunk(1 << 20);
  for (;;) {
    const int n = gzread(gz.get(), chunk.data(), unsigned(chunk.size()));
    if (n < 0) {
      int code = 0;
      const char* text = gzerror(gz.get(), &code);
      std::string message = text != nullptr ? text : "unknown zlib error";
      // zlib puts the path in front of its message.
      const std::string prefix = path.string() + ": ";
      if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
      out.damage = message;
      break;
    }
    if (n == 0) break;
    const uint64_t keep = std::min<uint64_t>(uint64_t(n), limit - std::min<uint64_t>(limit, kept.size()));
    kept.insert(kept.end(), chunk.begin(), chunk.begin() + keep);
    out.size += uint64_t(n);
  }
  out.kept = kept.size();
  out.bytes.reset(new unsigned char[std::max<size_t>(kept.size(), 1)]);
  if (!kept.empty()) std::memcpy(out.bytes.get(), kept.data(), kept.size());  // an empty vector's data() may be null
  return out;
}

// A member's last four bytes: its length modulo 2^32 (RFC 1952), exact for one member.
uint64_t last_member_size(const DecompressedFile& raw) {
  if (raw.size < 18) return 0;
  const unsigned char* t = raw.bytes.get() + raw.size - 4;
  return uint64_t(t[0]) | uint64_t(t[1]) << 8 | uint64_t(t[2]) << 16 | uint64_t(t[3]) << 24;
}

}  // namespace

std::optional<DecompressedFile> read_decompressed(const fs::path& path, uint64_t needed) {
  std::optional<DecompressedFile> raw = read_raw(path);
  if (!raw || !starts_member(raw->bytes.get(), raw->size)) return raw;  // zlib reads a plain file as it is
  const uint64_t limit = 2 * std::max<uint64_t>(needed, 1 << 20);
  if (auto out = inflate_members(raw->bytes.get(), raw->size, std::max(needed, last_member_size(*raw)), limit))
    return out;
  return inflate_with_zlib(path, limit);
}

}  // namespace regpipe::image_detail
