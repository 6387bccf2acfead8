#include <regpipe/host/error.hpp>
#include <regpipe/host/plugin_host.hpp>

#include "plugin_host/descriptor_check.hpp"
#include "plugin_host/did_you_mean.hpp"

#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace regpipe {

const char* kind_name(int32_t kind) {
  switch (kind) {
    case RP_KIND_COST: return "cost";
    case RP_KIND_OPTIMIZER: return "optimizer";
    case RP_KIND_RESAMPLER: return "resampler";
    default: return "unknown";
  }
}

const ParamSchema* Component::find_param(const std::string& param_name) const {
  for (const auto& p : params)
    if (p.name == param_name) return &p;
  return nullptr;
}

bool Component::supports_dof(unsigned dof) const {
  if (deformable_only) return false;
  return supported_dof == RP_DOF_ANY || (dof < 32 && (supported_dof & RP_DOF_BIT(dof)) != 0);
}

std::string Component::dof_support_text() const {
  return deformable_only ? "is a deformable optimizer, for a syn stage only"
                         : "supports DOF " + dof_list(supported_dof);
}

std::string dof_list(uint32_t supported_dof) {
  if (supported_dof == RP_DOF_ANY) return "any";
  std::vector<std::string> names;
  for (unsigned dof : {3u, 6u, 7u, 9u, 12u})
    if ((supported_dof & RP_DOF_BIT(dof)) != 0) names.push_back(std::to_string(dof));
  if (names.empty()) return "none this regpipe knows";
  std::string out = names.front();
  for (size_t i = 1; i < names.size(); ++i) out += (i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

struct PluginHost::Impl {
  std::vector<fs::path> search_path;
  std::vector<Component> components;
  std::vector<LoadProblem> problems;
  // Ids claimed by two libraries: "cost cpu.cr" -> both files, the first loaded first.
  std::map<std::string, std::pair<fs::path, fs::path>> contested;
  bool allow_override = false;
  // Libraries stay loaded for the host's lifetime: vtables and descriptor strings point
  // into them. Instances must be destroyed before the host.
  std::vector<boost::dll::shared_library> libraries;
  bool debug = false;

  void narrate(const std::string& line) const {
    if (debug) std::cerr << "regpipe plugin host: " << line << "\n";
  }
  void problem(const fs::path& file, const std::string& reason) {
    narrate("skipping " + file.string() + ": " + reason);
    problems.push_back({file, reason});
  }
  void load_library(const fs::path& file);
};

namespace {

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

std::vector<fs::path> build_search_path(const PluginSearchOptions& options) {
  std::vector<fs::path> dirs = options.plugin_paths;
  if (options.use_environment) {
    if (const char* env = std::getenv("REGPIPE_PLUGIN_PATH"); env != nullptr) {
      std::string list = env;
      size_t start = 0;
      while (start <= list.size()) {
        size_t end = list.find(':', start);
        if (end == std::string::npos) end = list.size();
        if (end > start) dirs.emplace_back(list.substr(start, end - start));
        start = end + 1;
      }
    }
  }
  if (options.use_default_dirs) {
    if (fs::path exe = executable_dir(); !exe.empty()) {
      dirs.push_back(exe / ".." / "plugins");                      // build tree, bundles
      dirs.push_back(exe / ".." / REGPIPE_INSTALL_PLUGIN_DIR_REL);  // installed prefix
    }
  }
  for (auto& d : dirs) d = d.lexically_normal();
  return dirs;
}

// Plugin files of one search path entry (a folder's *.so in name order, or a file itself).
std::vector<fs::path> plugin_files(const fs::path& entry) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_regular_file(entry, ec)) return {entry};
  if (!fs::is_directory(entry, ec)) return files;
  for (const auto& f : fs::directory_iterator(entry, ec))
    if (f.path().extension() == ".so" && f.is_regular_file(ec)) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Each library once, however many entries lead to it.
std::vector<fs::path> library_files_in(const std::vector<fs::path>& search_path) {
  std::vector<fs::path> out;
  std::set<fs::path> seen;
  for (const auto& entry : search_path)
    for (const auto& file : plugin_files(entry)) {
      std::error_code ec;
      fs::path canonical = fs::canonical(file, ec);
      if (!ec && seen.insert(canonical).second) out.push_back(canonical);
    }
  return out;
}

}  // namespace

void PluginHost::Impl::load_library(const fs::path& file) {
  boost::dll::shared_library lib;
  try {
    lib.load(file.string(), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    problem(file, std::string("cannot load: ") + e.what());
    return;
  }
  if (!lib.has(RP_PLUGIN_ENTRY_SYMBOL)) {
    problem(file, "not a regpipe plugin (no regpipe_plugin_entry symbol)");
    return;
  }
  const rp_plugin_entry* entry = lib.get<const rp_plugin_entry*()>(RP_PLUGIN_ENTRY_SYMBOL)();
  if (std::string reason = check_entry(entry); !reason.empty()) {
    problem(file, reason);
    return;
  }
  std::vector<Component> found;
  for (size_t i = 0; i < entry->component_count; ++i) {
    std::string reason;
    auto c = read_component(entry->components[i], &reason);
    if (!c) {
      problem(file, reason);
      return;
    }
    c->library = file;
    c->library_name = entry->library_name ? entry->library_name : file.stem().string();
    c->library_version = entry->library_version ? entry->library_version : "";
    c->license = entry->license ? entry->license : "";
    c->abi_minor = entry->abi_minor;
    found.push_back(std::move(*c));
  }
  for (auto& c : found) {
    auto same = std::find_if(components.begin(), components.end(), [&](const Component& o) {
      return o.kind == c.kind && o.id == c.id;
    });
    if (same != components.end()) {
      problem(file, std::string(kind_name(c.kind)) + " '" + c.id + "' is already provided by " +
                        same->library.string() + (allow_override ? " (kept: --plugin-override)" : ""));
      contested.emplace(std::string(kind_name(c.kind)) + " " + c.id, std::pair{same->library, file});
      continue;
    }
    narrate("loaded " + std::string(kind_name(c.kind)) + " '" + c.id + "' " + c.version +
            " from " + file.string());
    components.push_back(std::move(c));
  }
  libraries.push_back(std::move(lib));
}

PluginHost::PluginHost(const PluginSearchOptions& options) : impl_(std::make_unique<Impl>()) {
  const char* debug = std::getenv("REGPIPE_PLUGIN_DEBUG");
  impl_->debug = debug != nullptr && std::string(debug) == "1";
  impl_->allow_override = options.allow_override;
  impl_->search_path = build_search_path(options);
  for (const auto& entry : impl_->search_path) impl_->narrate("searching " + entry.string());
  for (const auto& file : library_files_in(impl_->search_path)) impl_->load_library(file);
}

std::vector<fs::path> plugin_library_files(const PluginSearchOptions& options) {
  return library_files_in(build_search_path(options));
}

PluginHost::~PluginHost() = default;

const std::vector<fs::path>& PluginHost::search_path() const { return impl_->search_path; }
const std::vector<Component>& PluginHost::components() const { return impl_->components; }
const std::vector<LoadProblem>& PluginHost::problems() const { return impl_->problems; }

const Component* PluginHost::find(int32_t kind, const std::string& id) const {
  // Two libraries claiming one id: which one a pipeline gets must not depend on the order of a
  // search path (a --plugin-path library would silently replace a built-in one).
  if (const auto both = impl_->contested.find(std::string(kind_name(kind)) + " " + id);
      both != impl_->contested.end() && !impl_->allow_override)
    throw UserError(std::string(kind_name(kind)) + " plugin '" + id + "' is provided by two libraries, " +
                    both->second.first.string() + " and " + both->second.second.string() +
                    ": remove one from the plugin path, or pass --plugin-override to use the first (" +
                    both->second.first.string() + ")");
  for (const auto& c : impl_->components)
    if (c.kind == kind && c.id == id) return &c;
  return nullptr;
}

const Component& PluginHost::require(int32_t kind, const std::string& id) const {
  if (const Component* c = find(kind, id)) return *c;
  std::vector<std::string> ids;
  for (const auto& c : impl_->components)
    if (c.kind == kind) ids.push_back(c.id);
  std::string message = "unknown " + std::string(kind_name(kind)) + " plugin '" + id + "'" +
                        did_you_mean(id, ids) + "; available: " +
                        (ids.empty() ? std::string("none (check the plugin path)") : join(ids, ", "));
  throw UserError(message);
}

}  // namespace regpipe
