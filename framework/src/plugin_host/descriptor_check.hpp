// Validation of what a plugin library hands the host: entry, descriptors, schemas, vtables.
#pragma once

#include <regpipe/abi.h>
#include <regpipe/host/plugin_host.hpp>

#include <optional>
#include <string>

namespace regpipe {

// Empty when the entry is usable by this host; otherwise the reason ("built for regpipe ABI
// 2.x; this regpipe speaks 1.x", "entry struct too small", ...).
std::string check_entry(const rp_plugin_entry* entry);

// Converts one descriptor to a Component, or returns the reason it is unusable.
std::optional<Component> read_component(const rp_component_desc& desc, std::string* reason);

}  // namespace regpipe
