#include "pipeline/component_yaml.hpp"

#include <regpipe/host/error.hpp>

#include "plugin_host/did_you_mean.hpp"

namespace regpipe {

void read_component_keys(YamlContext& ctx, const YAML::Node& node, const std::string& section,
                         const std::vector<std::string>& allowed, ComponentSpec& spec) {
  if (!ctx.check_map(section, node, allowed)) return;
  spec.where = ctx.where(section, node);
  const YAML::Node ids = node["plugin"];
  if (ids.IsDefined() && !ids.IsNull()) {
    spec.where = ctx.where(section + ".plugin", ids);
    spec.plugins.clear();
    if (ids.IsSequence()) {
      for (const auto& id : ids) {
        std::string s;
        if (ctx.read_string(section + ".plugin", id, &s)) spec.plugins.push_back(s);
      }
    } else {
      std::string s;
      if (ctx.read_string(section + ".plugin", ids, &s)) spec.plugins = {s};
    }
    if (spec.plugins.empty()) ctx.error(section + ".plugin", ids, "no plugin id given");
  }
  const YAML::Node params = node["params"];
  if (!params.IsDefined() || params.IsNull()) return;
  if (!params.IsMap()) {
    ctx.error(section + ".params", params, section + ".params must be a map");
    return;
  }
  for (const auto& kv : params) {
    const std::string pname = kv.first.Scalar();
    const std::string key = section + ".params." + pname;
    if (spec.params.count(pname) != 0) {
      ctx.error(key, kv.first, "duplicate key '" + pname + "'");
      continue;
    }
    std::string value;
    if (ctx.read_string(key, kv.second, &value)) spec.params[pname] = {value, ctx.where(key, kv.second)};
  }
}

void check_component(YamlContext& ctx, int32_t kind, const PluginHost& host,
                     const ComponentSpec& spec) {
  std::vector<const Component*> found;
  for (const auto& id : spec.plugins)
    if (const Component* c = host.find(kind, id)) found.push_back(c);
  if (found.empty()) {
    try {
      host.require(kind, spec.plugins.empty() ? std::string() : spec.plugins.front());
    } catch (const UserError& e) {
      ctx.errors_push(spec.where.text + ": " + e.what());
    }
    return;
  }
  // Each parameter must belong to at least one listed plugin and be valid for every one
  // that has it.
  for (const auto& [pname, text] : spec.params) {
    bool known = false;
    std::vector<std::string> names;
    for (const Component* c : found) {
      for (const auto& s : c->params) names.push_back(s.name);
      const ParamSchema* schema = c->find_param(pname);
      if (schema == nullptr) continue;
      known = true;
      try {
        parse_param(*schema, text.value);
      } catch (const UserError& e) {
        ctx.errors_push(text.where.text + ": " + e.what() + " (" + c->id + ")");
      }
    }
    if (!known)
      ctx.errors_push(text.where.text + ": unknown parameter '" + pname + "' of " + kind_name(kind) +
                      " '" + join(spec.plugins, "' or '") + "'" + did_you_mean(pname, names) +
                      (names.empty() ? "; it takes none" : "; it takes: " + join(names, ", ")));
  }
}

}  // namespace regpipe
