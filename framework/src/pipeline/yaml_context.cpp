#include "pipeline/yaml_context.hpp"

#include "pipeline/overrides.hpp"
#include "plugin_host/did_you_mean.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/input_file.hpp>

#include <yaml-cpp/depthguard.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

namespace fs = std::filesystem;

namespace regpipe {

std::vector<std::string> schema_children(const std::string& section,
                                         const std::vector<PipelineKeyDoc>& schema) {
  std::vector<std::string> out;
  const std::string prefix = section.empty() ? "" : section + ".";
  for (const auto& row : schema) {
    if (row.key.compare(0, prefix.size(), prefix) != 0) continue;
    std::string rest = row.key.substr(prefix.size());
    std::string child = rest.substr(0, rest.find('.'));
    if (std::find(out.begin(), out.end(), child) == out.end()) out.push_back(child);
  }
  return out;
}

YAML::Node load_yaml_file(const fs::path& file, const char* what,
                          const std::vector<Override>& overrides) {
  constexpr std::uintmax_t kMaxPipelineBytes = 16u << 20;  // a pipeline is a few hundred bytes
  if (const auto problem = input_file_problem(file, kMaxPipelineBytes))
    throw UserError(file.string() + ": cannot read this " + what + " file: " + *problem);
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::DeepRecursion& e) {
    throw UserError(file.string() + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                    ": nested too deeply for a YAML reader (" + std::to_string(e.depth()) +
                    " levels; a " + what + " nests a few)");
  } catch (const YAML::ParserException& e) {
    throw UserError(file.string() + ":" + std::to_string(e.mark.line + 1) + ":" +
                    std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw UserError(file.string() + ": cannot read: " + e.msg);
  }
  apply_overrides(root, overrides);
  return root;
}

bool YamlContext::from_command_line(const std::string& key) const {
  for (const auto& o : overridden_)
    if (key == o || key.compare(0, o.size() + 1, o + ".") == 0) return true;
  return false;
}

SourceLocation YamlContext::where(const std::string& key, const YAML::Node& node) const {
  if (from_command_line(key)) return {"--set " + key};
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return {file_.string()};
  return {file_.string() + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1)};
}

void YamlContext::error(const std::string& key, const YAML::Node& node, const std::string& message) {
  errors_.push_back(where(key, node).text + ": " + message);
}

bool YamlContext::check_map(const std::string& section, const YAML::Node& node,
                            const std::vector<std::string>& allowed) {
  if (!node.IsMap()) {
    error(section, node, "'" + section + "' must be a map of keys");
    return false;
  }
  std::map<std::string, YAML::Mark> seen;
  for (const auto& kv : node) {
    const std::string name = kv.first.Scalar();
    const std::string key = section.empty() ? name : section + "." + name;
    if (auto [it, fresh] = seen.emplace(name, kv.first.Mark()); !fresh) {
      error(key, kv.first,
            "duplicate key '" + name + "' (first at line " + std::to_string(it->second.line + 1) + ")");
      continue;
    }
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      error(key, kv.first,
            "unknown key '" + name + "'" + (section.empty() ? "" : " in " + section) +
                did_you_mean(name, allowed) + "; allowed: " + join(allowed, ", "));
  }
  return true;
}

bool YamlContext::read_string(const std::string& key, const YAML::Node& node, std::string* out) {
  if (!node.IsScalar()) {
    error(key, node, key + " must be a single value");
    return false;
  }
  *out = node.Scalar();
  return true;
}

bool YamlContext::read_int(const std::string& key, const YAML::Node& node, long long* out) {
  std::string text;
  if (!read_string(key, node, &text)) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    error(key, node, key + "=" + text + " is not an integer");
    return false;
  }
  *out = v;
  return true;
}

bool YamlContext::read_double(const std::string& key, const YAML::Node& node, double* out) {
  std::string text;
  if (!read_string(key, node, &text)) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
    error(key, node, key + "=" + text + " is not a number");
    return false;
  }
  *out = v;
  return true;
}

bool YamlContext::read_bool(const std::string& key, const YAML::Node& node, bool* out) {
  std::string text;
  if (!read_string(key, node, &text)) return false;
  if (text == "true" || text == "yes" || text == "on") *out = true;
  else if (text == "false" || text == "no" || text == "off") *out = false;
  else {
    error(key, node, key + "=" + text + " is not a boolean (true or false)");
    return false;
  }
  return true;
}

bool YamlContext::read_path(const std::string& key, const YAML::Node& node, fs::path* out) {
  std::string text;
  if (!read_string(key, node, &text)) return false;
  if (text.empty()) {
    error(key, node, key + " is empty");
    return false;
  }
  fs::path p(text);
  if (p.is_relative()) {
    fs::path base = from_command_line(key) ? fs::current_path() : fs::absolute(file_).parent_path();
    p = base / p;
  }
  *out = p.lexically_normal();
  return true;
}

}  // namespace regpipe
