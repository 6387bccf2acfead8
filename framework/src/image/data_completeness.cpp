#include "image/data_completeness.hpp"

#include "image/decompressed_file.hpp"
#include "image/file_names.hpp"
#include "image/metaimage_header_checks.hpp"
#include "image/raw_nifti_header.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

// `holds` says which file and how: "the file holds", "'x.img' decompresses to".
std::string truncated(const std::string& holds, uint64_t present, uint64_t promised) {
  return "truncated: " + holds + " " + std::to_string(present) + " of the " +
         std::to_string(promised) + " bytes its header promises";
}

// How messages name a data file: "the file" when it is the one the user named.
std::string file_name_for_message(const fs::path& data_file, const fs::path& named) {
  if (data_file == named) return "the file";
  return "'" + data_file.filename().string().append("'");
}

// ---- gzip ------------------------------------------------------------------------------

// What the contents lack: zlib found the stream corrupt (gzip's CRC catches damage that a size
// check misses; ITK would read a corrupt stream as garbage without an error), or they are short.
std::optional<std::string> contents_problem(const DecompressedFile& contents, uint64_t promised,
                                            const std::string& holds) {
  if (contents.damage) return "corrupt or truncated compressed data (zlib: " + *contents.damage + ")";
  if (contents.size < promised) return truncated(holds, contents.size, promised);
  return std::nullopt;
}

std::optional<std::string> check_gzip_size(const fs::path& path, uint64_t promised,
                                           const std::string& name) {
  const auto contents = read_decompressed(path, promised);
  if (!contents) return std::nullopt;  // ITK reports unreadable files itself
  return contents_problem(*contents, promised, name + " decompresses to");
}

std::optional<std::string> check_size(const fs::path& data_file, uint64_t promised,
                                      const fs::path& named) {
  const std::string name = file_name_for_message(data_file, named);
  if (ends_with_any(data_file.string(), {".gz"}))
    return check_gzip_size(data_file, promised, name);
  std::error_code ec;
  const uintmax_t size = fs::file_size(data_file, ec);
  if (ec) return std::nullopt;  // missing data file: ITK names it
  if (size < promised) return truncated(name + " holds", size, promised);
  return std::nullopt;
}

// ---- NIfTI-1 and Analyze 7.5 -----------------------------------------------------------

// The bytes a NIfTI-1 or Analyze header promises its data file holds (`pair`: the voxels are
// in a separate .img); nothing for a header that is not one.
std::optional<uint64_t> promised_bytes(const RawNiftiHeader& header, bool pair) {
  if (header.sizeof_hdr() != 348) return std::nullopt;  // not NIfTI-1: ITK decides
  const int rank = header.dim(0);
  const int bits = header.field<int16_t>(nifti_offset::bitpix);
  if (rank < 1 || rank > 7 || bits <= 0) return std::nullopt;
  uint64_t voxels = 1;
  for (int d = 1; d <= rank; ++d) voxels *= uint64_t(std::max(1, header.dim(d)));
  const float vox_offset = header.field<float>(nifti_offset::vox_offset);
  // A gzipped file's vox_offset can be any float (only an uncompressed size bounds it before
  // this): capped where no file reaches, so that the conversion stays defined.
  uint64_t offset = vox_offset > 0.0f ? uint64_t(std::min(double(vox_offset), 0x1p62)) : 0;
  if (!pair) offset = std::max<uint64_t>(offset, 352);  // header + extension flag
  return offset + voxels * uint64_t(bits) / 8;
}

// `named` is the file the user gave; the header and voxels are in the same file (.nii) or
// in a .hdr/.img pair.
std::optional<std::string> check_nifti(const fs::path& named, const fs::path& header_file,
                                       const fs::path& data_file) {
  const auto header = RawNiftiHeader::read(header_file);
  const auto promised = header ? promised_bytes(*header, header_file != data_file) : std::nullopt;
  if (!promised) return std::nullopt;
  return check_size(data_file, *promised, named);
}

// ---- MetaImage ---------------------------------------------------------------------------

std::optional<std::string> check_metaimage(const fs::path& path) {
  static const std::map<std::string, uint64_t> element_bytes = {
      {"MET_CHAR", 1},  {"MET_UCHAR", 1},     {"MET_SHORT", 2},      {"MET_USHORT", 2},
      {"MET_INT", 4},   {"MET_UINT", 4},      {"MET_FLOAT", 4},      {"MET_LONG", 8},
      {"MET_ULONG", 8}, {"MET_LONG_LONG", 8}, {"MET_ULONG_LONG", 8}, {"MET_DOUBLE", 8}};
  const auto header = read_metaimage_header(path);
  const auto* read = std::get_if<MetaImageHeader>(&header);
  if (!read) return std::nullopt;  // metaimage_header_problem refuses it
  std::map<std::string, std::string> keys = read->fields;
  if (keys.count("ElementDataFile") == 0 || element_bytes.count(keys["ElementType"]) == 0)
    return std::nullopt;
  const uint64_t header_end = read->data_offset;

  uint64_t promised = element_bytes.at(keys["ElementType"]);
  std::istringstream sizes(keys["DimSize"]);
  for (uint64_t n; sizes >> n;) promised *= n;
  if (keys.count("ElementNumberOfChannels"))
    promised *= std::stoull(keys["ElementNumberOfChannels"]);
  const bool compressed = lowercase(keys["CompressedData"]) == "true";
  if (compressed) {
    if (keys.count("CompressedDataSize") == 0) return std::nullopt;
    promised = std::stoull(keys["CompressedDataSize"]);
  }

  const std::string& data = keys["ElementDataFile"];
  if (data == "LOCAL") {
    const uintmax_t size = fs::file_size(path);
    if (size < header_end + promised)
      return truncated("the file holds", size - header_end, promised);
    return std::nullopt;
  }
  if (data == "LIST" || data.find_first_of("% ") != std::string::npos)
    return std::nullopt;  // slice lists
  if (keys.count("HeaderSize") && std::stoll(keys["HeaderSize"]) > 0)
    promised += std::stoull(keys["HeaderSize"]);
  return check_size(fs::path(data).is_absolute() ? fs::path(data) : path.parent_path() / data,
                    promised, path);
}

}  // namespace

std::optional<std::string> incomplete_data_reason(const fs::path& path) {
  try {
    if (name_ends_with_any(path, {".mha", ".mhd"})) return check_metaimage(path);
    if (is_single_nifti_name(path)) return check_nifti(path, path, path);
    if (is_nifti_pair_name(path))
      return check_nifti(path, pair_member(path, "hdr"), pair_member(path, "img"));
  } catch (const std::exception&) {
    return std::nullopt;  // an unparsable header: ITK gives the precise reason
  }
  return std::nullopt;
}

std::optional<std::string> incomplete_data_reason(const fs::path& path, const DecompressedFile& contents) {
  const auto header = RawNiftiHeader::parse(contents.bytes.get(), contents.kept);
  const auto promised = header ? promised_bytes(*header, false) : std::nullopt;
  if (!promised) return std::nullopt;
  const bool gz_name = ends_with_any(path.string(), {".gz"});
  return contents_problem(contents, *promised, gz_name ? "the file decompresses to" : "the file holds");
}

}  // namespace regpipe::image_detail
