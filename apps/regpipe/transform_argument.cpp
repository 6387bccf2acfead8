#include "transform_argument.hpp"

#include <regpipe/host/error.hpp>

#include <algorithm>

namespace regpipe::cli {

TransformArgument parse_transform_argument(const std::string& text) {
  TransformArgument argument;
  std::string rest = text;
  for (const char* name : {"fsl", "itk", "ants", "world", "warp"}) {
    const std::string prefix = std::string(name) + ":";
    if (rest.compare(0, prefix.size(), prefix) == 0) {
      if (prefix == "warp:")
        argument.warp = true;
      else
        argument.format = parse_transform_format(name);
      rest.erase(0, prefix.size());
      break;
    }
  }
  // The path ends at the first ":src=" or ":ref="; each option runs to the next ':'.
  const size_t options = std::min(rest.find(":src="), rest.find(":ref="));
  argument.path = rest.substr(0, options);
  if (argument.path.empty())
    throw UserError("transform argument '" + text + "' names no file");
  if (options == std::string::npos) return argument;
  rest.erase(0, options + 1);
  while (!rest.empty()) {
    const size_t end = rest.find(':');
    const std::string option = rest.substr(0, end);
    rest.erase(0, end == std::string::npos ? rest.size() : end + 1);
    const size_t equals = option.find('=');
    const std::string key = option.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : option.substr(equals + 1);
    if (key != "src" && key != "ref")
      throw UserError("transform argument '" + text + "': unknown option '" + option +
                      "'; after the file come src=IMAGE and ref=IMAGE");
    if (value.empty())
      throw UserError("transform argument '" + text + "': " + key + "= names no image");
    (key == "src" ? argument.src : argument.ref) = value;
  }
  return argument;
}

}  // namespace regpipe::cli
