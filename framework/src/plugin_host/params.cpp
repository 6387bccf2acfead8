#include <regpipe/host/error.hpp>
#include <regpipe/host/plugin_host.hpp>

#include "plugin_host/did_you_mean.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace regpipe {
namespace {

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

void check_range(const ParamSchema& p, const std::string& text, double v) {
  if (v < p.min)
    throw UserError(p.name + "=" + text + " is below the minimum " + number_text(p.min));
  if (v > p.max)
    throw UserError(p.name + "=" + text + " is above the maximum " + number_text(p.max));
}

}  // namespace

ParamValue parse_param(const ParamSchema& p, const std::string& text) {
  ParamValue v;
  v.type = p.type;
  switch (p.type) {
    case RP_PARAM_BOOL:
      if (text == "true" || text == "yes" || text == "on" || text == "1") v.int_value = 1;
      else if (text == "false" || text == "no" || text == "off" || text == "0") v.int_value = 0;
      else throw UserError(p.name + "=" + text + " is not a boolean (true or false)");
      return v;
    case RP_PARAM_INT: {
      errno = 0;
      char* end = nullptr;
      long long i = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno == ERANGE)
        throw UserError(p.name + "=" + text + " is not an integer");
      check_range(p, text, double(i));
      v.int_value = i;
      return v;
    }
    case RP_PARAM_DOUBLE: {
      errno = 0;
      char* end = nullptr;
      double d = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(d))
        throw UserError(p.name + "=" + text + " is not a number");
      check_range(p, text, d);
      v.double_value = d;
      return v;
    }
    case RP_PARAM_ENUM:
      for (const auto& c : p.choices)
        if (c == text) {
          v.string_value = text;
          return v;
        }
      throw UserError(p.name + "=" + text + " is not one of " + join(p.choices, ", ") +
                      did_you_mean(text, p.choices));
    default:  // STRING, PATH
      v.string_value = text;
      return v;
  }
}

std::map<std::string, ParamValue> resolve_params(const Component& c,
                                                 const std::map<std::string, std::string>& texts) {
  std::vector<std::string> names;
  for (const auto& p : c.params) names.push_back(p.name);
  for (const auto& [name, text] : texts)
    if (c.find_param(name) == nullptr)
      throw UserError("unknown parameter '" + name + "' of " + kind_name(c.kind) + " '" + c.id +
                      "'" + did_you_mean(name, names) +
                      (names.empty() ? "; it takes none" : "; it takes: " + join(names, ", ")));
  std::map<std::string, ParamValue> out;
  for (const auto& p : c.params) {
    auto it = texts.find(p.name);
    out[p.name] = parse_param(p, it != texts.end() ? it->second : p.default_value);
  }
  return out;
}

}  // namespace regpipe
