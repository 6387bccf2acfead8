// Reading the pipeline YAML through const nodes only (yaml-cpp 0.7's non-const operator[]
// inserts what it looks up), collecting every problem with its location.
#pragma once

#include <regpipe/host/pipeline.hpp>

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

namespace regpipe {

// Parses a `what` ("pipeline", "compare") file and applies the --set overrides. Throws
// UserError for a missing file or a syntax error (with line:column).
YAML::Node load_yaml_file(const std::filesystem::path& file, const char* what,
                          const std::vector<Override>& overrides);

class YamlContext {
 public:
  YamlContext(std::filesystem::path file, std::set<std::string> overridden_keys)
      : file_(std::move(file)), overridden_(std::move(overridden_keys)) {}

  // "file:line:col" (1-based) or "--set key" when the value came from the command line.
  SourceLocation where(const std::string& key, const YAML::Node& node) const;
  bool from_command_line(const std::string& key) const;
  void error(const std::string& key, const YAML::Node& node, const std::string& message);
  // An error whose location is already in the text.
  void errors_push(const std::string& located_message) { errors_.push_back(located_message); }
  const std::vector<std::string>& errors() const { return errors_; }

  // Checks that `node` is a map with no duplicate keys and only keys allowed under
  // `section` by pipeline_schema() (plus `extra_allowed`). Returns false if not a map.
  bool check_map(const std::string& section, const YAML::Node& node,
                 const std::vector<std::string>& allowed);

  // Scalar conversions; on failure record an error and return false.
  bool read_string(const std::string& key, const YAML::Node& node, std::string* out);
  bool read_int(const std::string& key, const YAML::Node& node, long long* out);
  bool read_double(const std::string& key, const YAML::Node& node, double* out);
  bool read_bool(const std::string& key, const YAML::Node& node, bool* out);
  // A path relative to the YAML file's folder (or to the current folder for --set values).
  bool read_path(const std::string& key, const YAML::Node& node, std::filesystem::path* out);

 private:
  std::filesystem::path file_;
  std::set<std::string> overridden_;
  std::vector<std::string> errors_;
};

// The allowed child keys of a section according to a schema, pipeline_schema() by default
// ("inputs" -> reference, moving, ...; "registration" -> dof, levels_mm, ..., cost, ...).
std::vector<std::string> schema_children(const std::string& section,
                                         const std::vector<PipelineKeyDoc>& schema = pipeline_schema());

}  // namespace regpipe
