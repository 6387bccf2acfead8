// regpipe plugins [--json | --markdown [LIBRARY]]
#include "commands.hpp"
#include "plugin_listing.hpp"

#include <cstdio>

namespace regpipe::cli {

Command add_plugins(CLI::App& app, CommonOptions& common) {
  struct Options {
    bool json = false;
    bool markdown = false;
    std::string library;
  };
  auto o = std::make_shared<Options>();
  auto* json = app.add_flag("--json", o->json, "Machine-readable output");
  app.add_flag("--markdown", o->markdown, "Parameter tables in Markdown (for plugin READMEs)")
      ->excludes(json);
  app.add_option("--library", o->library, "With --markdown: only this library (e.g. libregpipe_cost_cpu)");
  app.add_option("--plugin-path", common.plugin_paths, "Extra plugin folder or file (repeatable)")
      ->type_name("DIR");
  return [o, &common] {
    PluginSearchOptions search;
    for (const auto& p : common.plugin_paths) search.plugin_paths.emplace_back(p);
    PluginHost host(search);
    if (o->json) std::printf("%s\n", components_json(host).dump(2).c_str());
    else if (o->markdown) std::printf("%s", components_markdown(host, o->library).c_str());
    else std::printf("%s", components_text(host).c_str());
    return kExitOk;
  };
}

}  // namespace regpipe::cli
