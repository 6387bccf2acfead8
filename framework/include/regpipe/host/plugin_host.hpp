// The plugin host: finds plugin libraries, loads each once with Boost.DLL, checks the ABI
// and validates descriptors. A broken or incompatible library is reported (file + reason)
// and skipped; it never takes the host down.
#pragma once

#include <regpipe/abi.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace regpipe {

struct ParamSchema {
  std::string name;
  int32_t type = RP_PARAM_STRING;  // RP_PARAM_*
  std::string default_value;
  double min = 0.0, max = 0.0;
  std::vector<std::string> choices;
  std::string unit;
  std::string doc;
};

struct Component {
  int32_t kind = RP_KIND_COST;  // RP_KIND_*
  std::string id, name, version, description;
  std::vector<ParamSchema> params;
  std::filesystem::path library;  // file it came from
  std::string library_name, library_version, license;
  uint32_t abi_minor = 0;         // minor version the plugin was built against
  const void* vtable = nullptr;   // rp_cost_vtable* / rp_optimizer_vtable* / rp_resampler_vtable*
  // Optimizers: the DOF minimize accepts (RP_DOF_* bits, ABI 1.2); RP_DOF_ANY when the
  // plugin declares none (a 1.0/1.1 plugin, or one that accepts every DOF).
  uint32_t supported_dof = RP_DOF_ANY;
  // Optimizers: RP_OPTIMIZER_DEFORMABLE_ONLY (ABI 1.5): no DOF at all, a syn stage's only.
  bool deformable_only = false;

  const ParamSchema* find_param(const std::string& param_name) const;
  bool supports_dof(unsigned dof) const;
  // What an optimizer takes, for messages: "supports DOF 6 or 12", or that it is deformable only.
  std::string dof_support_text() const;
};

const char* kind_name(int32_t kind);  // "cost", "optimizer", "resampler"

// The DOF of an RP_DOF_* set, of those this host knows: "6, 7, 9 or 12"; "any" for RP_DOF_ANY.
std::string dof_list(uint32_t supported_dof);

struct LoadProblem {
  std::filesystem::path file;
  std::string reason;
};

struct PluginSearchOptions {
  std::vector<std::filesystem::path> plugin_paths;  // --plugin-path, searched first
  bool use_environment = true;     // REGPIPE_PLUGIN_PATH (':'-separated)
  bool use_default_dirs = true;    // <exe>/../plugins (build tree, bundles) and the install dir
  // An id claimed by two libraries is refused where a pipeline names it (find, require), with
  // both files named; with this, the first in the search order is used (--plugin-override).
  bool allow_override = false;
};

// The plugin library files the search path leads to, each once (canonical), in search order:
// a folder's *.so in name order, a file itself. Nothing is loaded.
std::vector<std::filesystem::path> plugin_library_files(const PluginSearchOptions& options);

class PluginHost {
 public:
  explicit PluginHost(const PluginSearchOptions& options);
  ~PluginHost();
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;

  const std::vector<std::filesystem::path>& search_path() const;
  const std::vector<Component>& components() const;
  const std::vector<LoadProblem>& problems() const;

  // Null when no library provides it; UserError when two do (PluginSearchOptions::allow_override).
  const Component* find(int32_t kind, const std::string& id) const;
  // Throws UserError "unknown cost plugin 'x' (did you mean 'y'?); available: a, b, c".
  const Component& require(int32_t kind, const std::string& id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A typed parameter value (the host side of rp_param_value).
struct ParamValue {
  int32_t type = RP_PARAM_STRING;
  long long int_value = 0;
  double double_value = 0.0;
  std::string string_value;
};

// Converts YAML/CLI text to a typed value checked against the schema (type, range, choices).
// Throws UserError "bins=3 is below the minimum 8" / "interpolation=cubic is not one of ...".
ParamValue parse_param(const ParamSchema& schema, const std::string& text);

// Every schema parameter of `component`: the given texts parsed, defaults for the rest.
// Unknown names throw UserError with a "did you mean".
std::map<std::string, ParamValue> resolve_params(const Component& component,
                                                 const std::map<std::string, std::string>& texts);

}  // namespace regpipe
