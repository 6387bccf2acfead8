#include "transform/itk_transform_names.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace regpipe::transform_detail {
namespace {

// ITK compares and creates names as C strings: what follows a NUL is not part of them. Every
// space character is trimmed, at least as much as ITK trims, so that no line ITK reads as a
// "Transform:" line escapes the check.
std::string as_itk_reads(std::string text) {
  text = text.substr(0, text.find('\0'));
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!text.empty() && space(text.back())) text.pop_back();
  size_t first = 0;
  while (first < text.size() && space(text[first])) ++first;
  return text.substr(first);
}

bool is_transform_key(const std::string& key) {
  static const std::string kKey = "transform";
  return key.size() == kKey.size() &&
         std::equal(key.begin(), key.end(), kKey.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

}  // namespace

std::string printable_name(std::string_view name) {
  std::string text(name.substr(0, 60));
  for (char& c : text)
    if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
  return text;
}

bool is_itk_transform_type_name(std::string_view name) {
  // From the end: two dimensions, the precision, then the class (a letter, then letters and
  // digits). No std::regex: its matcher recurses per character, and a file may be long.
  const auto all = [](std::string_view text, auto accepts) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [&](char c) { return accepts(static_cast<unsigned char>(c)); });
  };
  std::string_view parts[4];
  for (int i = 3; i > 0; --i) {
    const size_t underscore = name.rfind('_');
    if (underscore == std::string_view::npos) return false;
    parts[i] = name.substr(underscore + 1);
    name = name.substr(0, underscore);
  }
  parts[0] = name;
  const auto digit = [](unsigned char c) { return std::isdigit(c) != 0; };
  const auto alnum = [](unsigned char c) { return std::isalnum(c) != 0; };
  return all(parts[0], alnum) && std::isalpha(static_cast<unsigned char>(parts[0][0])) &&
         (parts[1] == "double" || parts[1] == "float") && all(parts[2], digit) && all(parts[3], digit);
}

std::optional<std::string> itk_text_transform_names_problem(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    // Each piece between carriage returns too, so that none can start a line ITK sees.
    std::istringstream pieces(line);
    std::string piece;
    while (std::getline(pieces, piece, '\r')) {
      const size_t colon = piece.find(':');
      if (colon == std::string::npos || !is_transform_key(as_itk_reads(piece.substr(0, colon)))) continue;
      const std::string name = as_itk_reads(piece.substr(colon + 1));
      if (!is_itk_transform_type_name(name))
        return "line " + std::to_string(number) + " names '" + printable_name(name) +
               "', not a transform type as ITK writes one (Class_double_3_3)";
    }
  }
  return std::nullopt;
}

}  // namespace regpipe::transform_detail
