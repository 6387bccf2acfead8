#include "io/itk_message.hpp"

#include <cctype>
#include <regex>

namespace regpipe {

std::string readable_itk_description(const std::string& description) {
  static const std::regex object_prefix(R"(ITK ERROR: \w+\(0x[0-9a-fA-F]+\): )");
  static const std::regex line_breaks(R"(\s*\n\s*)");
  std::string text = std::regex_replace(description, object_prefix, "");
  text = std::regex_replace(text, line_breaks, " ");
  while (!text.empty() &&
         (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == ':'))
    text.pop_back();
  return text;
}

}  // namespace regpipe
