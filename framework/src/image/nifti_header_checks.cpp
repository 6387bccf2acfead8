#include "image/nifti_header_checks.hpp"

#include "image/file_grid_checks.hpp"
#include "image/raw_nifti_header.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

// The single-file header and its extension flag come before the voxels (NIfTI-1 standard).
constexpr float kFirstVoxelOffset = 352.0f;

struct DataType {
  const char* name;
  int bits;
};

// nifti1.h's datatype codes with their sizes.
const std::map<int, DataType>& data_types() {
  static const std::map<int, DataType> types = {
      {1, {"binary", 1}},       {2, {"uint8", 8}},          {4, {"int16", 16}},
      {8, {"int32", 32}},       {16, {"float32", 32}},      {32, {"complex64", 64}},
      {64, {"float64", 64}},    {128, {"rgb24", 24}},       {256, {"int8", 8}},
      {512, {"uint16", 16}},    {768, {"uint32", 32}},      {1024, {"int64", 64}},
      {1280, {"uint64", 64}},   {1536, {"float128", 128}},  {1792, {"complex128", 128}},
      {2048, {"complex256", 256}}, {2304, {"rgba32", 32}}};
  return types;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

// The magic as printable text: "n+1", "\x00\x41".
std::string printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  return out;
}

// niftilib takes any "n+<digit>" or "ni<digit>" as NIfTI (version <digit>) and parses its forms.
bool looks_like_nifti_magic(const std::string& magic) {
  return magic.size() == 3 && magic[0] == 'n' && (magic[1] == '+' || magic[1] == 'i') && magic[2] >= '1' &&
         magic[2] <= '9';
}

std::optional<std::string> magic_problem(const RawNiftiHeader& h, bool pair, bool* is_nifti) {
  const std::string magic = h.magic();
  *is_nifti = magic == (pair ? "ni1" : "n+1");
  // A pair without NIfTI's magic is Analyze 7.5.
  if (*is_nifti || (pair && !looks_like_nifti_magic(magic))) return std::nullopt;
  std::string message = "wrong NIfTI magic '" + printable(magic) + "' (" +
                        (pair ? "a .hdr/.img pair has 'ni1'" : "a single-file .nii has 'n+1'");
  if (magic == "ni1") message += "; 'ni1' marks a .hdr/.img pair";
  if (magic == "n+1") message += "; 'n+1' marks a single .nii file";
  return message + ")";
}

std::optional<std::string> dims_problem(const RawNiftiHeader& h) {
  const int rank = h.dim(0);
  if (rank < 1 || rank > 7)
    return "dim[0] (the number of dimensions) is " + std::to_string(rank) + "; NIfTI allows 1 to 7";
  for (int d = 1; d <= rank; ++d)
    if (h.dim(d) < 1)
      return "dim[" + std::to_string(d) + "] (the size along axis " + std::to_string(d) + ") is " +
             std::to_string(h.dim(d)) + "; sizes are at least 1";
  return std::nullopt;
}

std::optional<std::string> type_problem(const RawNiftiHeader& h) {
  const int code = h.field<int16_t>(nifti_offset::datatype);
  const int bitpix = h.field<int16_t>(nifti_offset::bitpix);
  const auto type = data_types().find(code);
  if (type == data_types().end())
    return "datatype " + std::to_string(code) + " is not a NIfTI data type code";
  if (bitpix != type->second.bits)
    return "bitpix " + std::to_string(bitpix) + " contradicts datatype " + std::to_string(code) +
           " (" + type->second.name + ", " + std::to_string(type->second.bits) + " bits per voxel)";
  return std::nullopt;
}

// The spatial voxel sizes. Analyze 7.5 files may carry a negative x size (an old way of
// marking radiological order, which FSL reads), NIfTI ones may not.
std::optional<std::string> pixdim_problem(const RawNiftiHeader& h, bool is_nifti) {
  for (int d = 1; d <= std::min(3, h.dim(0)); ++d) {
    const float size = h.pixdim(d);
    const bool usable = std::isfinite(size) && (is_nifti ? size > 0.0f : size != 0.0f) && std::abs(size) < kFarthestMm;
    if (!usable)
      return "pixdim[" + std::to_string(d) + "] (the voxel size along axis " + std::to_string(d) +
             ") is " + number(size) + "; voxel sizes are finite, " + (is_nifti ? "positive" : "not 0") +
             " and below 1e6 mm";
  }
  return std::nullopt;
}

std::optional<std::string> vox_offset_problem(const RawNiftiHeader& h, bool pair, const fs::path& path) {
  const float offset = h.field<float>(nifti_offset::vox_offset);
  const float least = pair ? 0.0f : kFirstVoxelOffset;
  if (!std::isfinite(offset) || offset < least)
    return "vox_offset " + number(offset) + " is not a byte offset of the voxels (at least " +
           number(least) + (pair ? "" : ", after the header") + ")";
  const fs::path data_file = pair ? pair_member(path, "img") : path;
  std::error_code ec;
  const uintmax_t size = fs::file_size(data_file, ec);
  const bool gzipped = data_file.extension() == ".gz" || data_file.extension() == ".GZ";
  if (!ec && !gzipped && double(offset) > double(size))
    return "vox_offset " + number(offset) + " is beyond the end of " +
           (pair ? "'" + data_file.filename().string() + "'" : std::string("the file")) + " (" +
           std::to_string(size) + " bytes)";
  return std::nullopt;
}

// niftilib turns each form into a matrix when its code is set; ITK then decomposes it with
// vnl, which aborts on NaN or infinity and may spin on elements of 1e20 (kFarthestMm).
std::optional<std::string> forms_problem(const RawNiftiHeader& h) {
  if (h.field<int16_t>(nifti_offset::qform_code) > 0) {
    static const char* const names[] = {"quatern_b", "quatern_c", "quatern_d",
                                        "qoffset_x", "qoffset_y", "qoffset_z"};
    for (int i = 0; i < 6; ++i) {
      const float value = h.field<float>(nifti_offset::quatern_b + 4 * size_t(i));
      const bool usable = i < 3 ? std::isfinite(value) : std::abs(value) < kFarthestMm;
      if (!usable) return std::string("its qform's ") + names[i] + " is " + number(value);
    }
    if (!std::isfinite(h.pixdim(0))) return "its qform's qfac (pixdim[0]) is " + number(h.pixdim(0));
  }
  if (h.field<int16_t>(nifti_offset::sform_code) > 0) {
    for (int i = 0; i < 12; ++i) {
      const float value = h.field<float>(nifti_offset::srow_x + 4 * size_t(i));
      if (!(std::abs(value) < kFarthestMm))
        return std::string("its sform's srow_") + "xyz"[i / 4] + "[" + std::to_string(i % 4) +
               "] is " + number(value);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> nifti_header_problem(const fs::path& path) {
  const bool pair = is_nifti_pair_name(path);
  if (!pair && !is_single_nifti_name(path)) return std::nullopt;
  const auto header = RawNiftiHeader::read(pair ? pair_member(path, "hdr") : path);
  if (!header) return std::nullopt;
  // niftilib reads a header whatever its sizeof_hdr says (it takes the byte order from dim[0]).
  if (header->sizeof_hdr() != 348)
    return "sizeof_hdr is " + std::to_string(header->sizeof_hdr()) + "; a NIfTI-1 header has 348";
  bool is_nifti = false;
  if (auto problem = magic_problem(*header, pair, &is_nifti)) return problem;
  if (auto problem = dims_problem(*header)) return problem;
  if (auto problem = type_problem(*header)) return problem;
  if (auto problem = pixdim_problem(*header, is_nifti)) return problem;
  if (auto problem = vox_offset_problem(*header, pair, path)) return problem;
  if (is_nifti) return forms_problem(*header);
  return std::nullopt;
}

}  // namespace regpipe::image_detail
