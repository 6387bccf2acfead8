// A component entry of a YAML file ({plugin: id or preference list, params: map}), shared by
// the pipeline loader (registration.cost, ...) and `regpipe compare` (its list of costs).
#pragma once

#include "pipeline/yaml_context.hpp"

namespace regpipe {

// Reads `plugin` and `params` of the component map `node` found at `section` (keys checked
// against `allowed`, which may hold more keys for the caller to read). Problems go to ctx.
void read_component_keys(YamlContext& ctx, const YAML::Node& node, const std::string& section,
                         const std::vector<std::string>& allowed, ComponentSpec& spec);

// Checks the ids (a single id must exist; of a preference list, at least one) and every
// parameter against the schemas of the listed plugins that exist.
void check_component(YamlContext& ctx, int32_t kind, const PluginHost& host,
                     const ComponentSpec& spec);

}  // namespace regpipe
