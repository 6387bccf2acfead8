// --set key=value overrides applied to the parsed YAML tree before validation.
#pragma once

#include <regpipe/host/pipeline.hpp>

#include <yaml-cpp/yaml.h>

namespace regpipe {

// Throws UserError when a key runs through a value that is not a map, or a value is not YAML.
void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides);

}  // namespace regpipe
