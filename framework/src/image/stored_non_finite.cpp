#include "image/stored_non_finite.hpp"

#include "image/byte_order.hpp"
#include "image/raw_nifti_header.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

struct GzClose {
  void operator()(gzFile_s* file) const { gzclose(file); }
};

// Exponent bits all ones: NaN or infinity, whatever the byte order once swapped.
template <class Bits>
bool non_finite_bits(const unsigned char* bytes, bool swap) {
  const Bits bits = load_ordered<Bits>(bytes, swap);
  constexpr Bits exponent = sizeof(Bits) == 4 ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);
  return (bits & exponent) == exponent;
}

}  // namespace

std::optional<uint64_t> first_stored_non_finite(const fs::path& path, uint64_t count) {
  const auto header = RawNiftiHeader::read(path);
  if (!header) return std::nullopt;
  const int datatype = header->field<int16_t>(nifti_offset::datatype);
  if (datatype != 16 && datatype != 64) return std::nullopt;
  const size_t width = datatype == 16 ? 4 : 8;
  // The byte order: the one in which sizeof_hdr reads 348 (RawNiftiHeader decided it).
  int32_t raw_size = 0;
  {
    std::unique_ptr<gzFile_s, GzClose> file(gzopen(path.c_str(), "rb"));
    if (!file || gzread(file.get(), &raw_size, sizeof(raw_size)) != int(sizeof(raw_size))) return std::nullopt;
  }
  const bool swap = raw_size != 348;
  const bool pair = header->magic() == "ni1";
  const fs::path data_file = pair ? pair_member(path, "img") : path;
  std::unique_ptr<gzFile_s, GzClose> file(gzopen(data_file.c_str(), "rb"));
  if (!file) return std::nullopt;
  const auto offset = static_cast<z_off_t>(header->field<float>(nifti_offset::vox_offset));
  if (gzseek(file.get(), offset, SEEK_SET) != offset) return std::nullopt;
  std::vector<unsigned char> chunk(width << 16);
  for (uint64_t done = 0; done < count;) {
    const uint64_t values = std::min<uint64_t>(count - done, chunk.size() / width);
    const int got = gzread(file.get(), chunk.data(), unsigned(values * width));
    if (got != int(values * width)) return std::nullopt;
    for (uint64_t i = 0; i < values; ++i) {
      const unsigned char* value = &chunk[i * width];
      if (width == 4 ? non_finite_bits<uint32_t>(value, swap) : non_finite_bits<uint64_t>(value, swap))
        return done + i;
    }
    done += values;
  }
  return std::nullopt;
}

}  // namespace regpipe::image_detail
