// Renderings of the loaded components: text for people, JSON for tools, Markdown for the
// plugin READMEs (a test keeps those tables current).
#pragma once

#include <regpipe/host/plugin_host.hpp>

#include <nlohmann/json.hpp>
#include <string>

namespace regpipe::cli {

std::string components_text(const PluginHost& host);
nlohmann::json components_json(const PluginHost& host);
// Parameter tables of the components of one library (by file name stem, e.g.
// "libregpipe_cost_cpu"), or of all when `library` is empty.
std::string components_markdown(const PluginHost& host, const std::string& library);

}  // namespace regpipe::cli
