#include "image/metaimage_header_checks.hpp"

#include "image/file_names.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <variant>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

// MetaIO's field names and text values are char[255].
constexpr size_t kLongestText = 254;
// MetaIO keeps the axes in arrays of 10 (metaImage.h: m_DimSize[10]).
constexpr double kMostAxes = 10;
// Real headers are a few hundred bytes; MetaIO stops at a line of 500 characters.
constexpr size_t kLongestHeader = size_t{1} << 20;

std::string trimmed(const std::string& s, const char* blanks = " \t") {
  const size_t first = s.find_first_not_of(blanks);
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

// Fields whose values may be longer than MetaIO's 255-byte text fields: those it reads as
// numbers (a 4D TransformMatrix is 16 numbers at 17 digits) and ElementDataFile, which ITK
// 5.2's MetaImage keeps in a std::string (a data file's path may be long).
bool may_be_long(const std::string& key) {
  static const std::set<std::string> kKeys = {
      "DimSize",         "ElementSpacing", "ElementSize", "Offset",     "Position",
      "Origin",          "CenterOfRotation", "TransformMatrix", "Rotation", "Orientation",
      "ElementDataFile"};
  return kKeys.count(key) > 0;
}

// NDims as MetaIO reads it (a double, cast to int): a whole number of 1 to 10 axes.
bool sound_axis_count(const std::string& value) {
  double axes = 0;
  return static_cast<bool>(std::istringstream(value) >> axes) && axes >= 1 && axes <= kMostAxes &&
         axes == std::floor(axes);
}

struct Field {
  std::string key;
  std::string value;  // from its first character, as MetaIO copies it: trailing blanks count
};

// The field on `line` as MetaIO reads it, or what would make MetaIO misread it or overflow.
std::variant<Field, std::string> read_field(int number, const std::string& line) {
  const std::string where = "field " + std::to_string(number) + " of its header";
  // MetaIO compares names as C strings but reads on past a NUL: a NUL would hide from these
  // checks what MetaIO reads next. A carriage return inside a line ends MetaIO's name early.
  if (line.find('\0') != std::string::npos) return where + " has a NUL byte; is it a MetaImage header?";
  if (line.find('\r') != std::string::npos)
    return where + " has a carriage return inside its line; is it a MetaImage header?";
  const size_t separator = line.find_first_of("=:");
  // A line without a separator is not MetaImage, and MetaIO would read the next line's text
  // as this field's value.
  if (separator == std::string::npos)
    return where + " ('" + trimmed(line).substr(0, 40) + "') has no '='; is it a MetaImage header?";
  Field field{trimmed(line.substr(0, separator), " \t\v\f"), ""};
  if (field.key.size() > kLongestText)
    return where + " has a " + std::to_string(field.key.size()) +
           "-character name (MetaImage names are at most " + std::to_string(kLongestText) +
           "); is it a MetaImage header?";
  // MetaIO skips every '=', ':' and blank after the name.
  const size_t start = line.find_first_not_of("=: \t", separator);
  if (start != std::string::npos) field.value = line.substr(start);
  if (field.value.size() > kLongestText && !may_be_long(field.key))
    return where + " (" + field.key.substr(0, 40) + ") has a " + std::to_string(field.value.size()) +
           "-character value (MetaIO holds at most " + std::to_string(kLongestText) +
           "); is it a MetaImage header?";
  if (field.key == "NDims" && !sound_axis_count(field.value))
    return "NDims is '" + trimmed(field.value).substr(0, 40) + "'; MetaImage files have 1 to " +
           std::to_string(static_cast<int>(kMostAxes)) + " axes";
  return field;
}

// The header's fields from `head`, the file's first bytes (`whole`: all of the file, or
// kLongestHeader of it), or what is wrong with them; nullopt where a cut-off `head` ends before
// ElementDataFile and the file has more to read.
std::optional<std::variant<MetaImageHeader, std::string>> parse_header(const std::string& head, bool whole) {
  std::istringstream lines(head);
  // MetaIO reads one field a line (blank lines skipped) until ElementDataFile; the voxels follow.
  MetaImageHeader header;
  std::string line;
  for (int number = 0; std::getline(lines, line);) {
    if (lines.eof() && !whole) return std::nullopt;  // the line may go on past `head`
    if (lines.eof() && head.size() == kLongestHeader)
      return "its header runs past " + std::to_string(kLongestHeader >> 20) +
             " MiB without ElementDataFile; is it a MetaImage header?";
    header.data_offset = std::min<std::uint64_t>(header.data_offset + line.size() + 1, head.size());
    if (!line.empty() && line.back() == '\r') line.pop_back();  // headers written on Windows
    if (trimmed(line, " \t\v\f").empty()) continue;
    const auto read = read_field(++number, line);
    if (const auto* problem = std::get_if<std::string>(&read)) return *problem;
    const Field& field = std::get<Field>(read);
    header.fields[field.key] = trimmed(field.value);
    if (field.key != "ElementDataFile") continue;
    // Slice lists and file-name patterns: MetaIO crashes (SIGSEGV) or throws on malformed ones,
    // and regpipe's volumes come in one data file.
    const std::string& file = header.fields[field.key];
    if (file.rfind("LIST", 0) == 0 || file.find('%') != std::string::npos)
      return "its voxels are in a list or pattern of files (ElementDataFile = " + file.substr(0, 40) +
             "); regpipe reads MetaImage voxels from one file (LOCAL or a file name)";
    return header;
  }
  if (!whole) return std::nullopt;
  return header;
}

}  // namespace

std::variant<MetaImageHeader, std::string> read_metaimage_header(const fs::path& path) {
  // A first block that holds any real header, grown (to kLongestHeader at most) only for one
  // that goes on, each growth reading on from where the last stopped: a .mha's voxels after
  // its header are not read.
  std::ifstream in(path, std::ios::binary);
  std::string head;
  for (size_t block = size_t{64} << 10;; block = std::min(4 * block, kLongestHeader)) {
    const size_t had = head.size();
    head.resize(block);
    in.read(head.data() + had, static_cast<std::streamsize>(block - had));
    head.resize(had + static_cast<size_t>(in.gcount()));
    const bool whole = head.size() < block || block == kLongestHeader;
    if (auto parsed = parse_header(head, whole)) return *std::move(parsed);
  }
}

std::optional<std::string> metaimage_header_problem(const fs::path& path) {
  if (!name_ends_with_any(path, {".mha", ".mhd"})) return std::nullopt;
  const auto header = read_metaimage_header(path);
  if (const auto* problem = std::get_if<std::string>(&header)) return *problem;
  return std::nullopt;
}

}  // namespace regpipe::image_detail
