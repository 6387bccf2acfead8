// regpipe compare compare.yaml: cost functions side by side on one image pair.
#include "commands.hpp"

#include <regpipe/host/compare.hpp>

#include <cstdio>

namespace regpipe::cli {

Command add_compare(CLI::App& app, CommonOptions& common) {
  struct Options {
    std::string file;
    std::vector<std::string> sets;
    bool validate_only = false;
  };
  auto o = std::make_shared<Options>();
  app.add_option("compare", o->file, "Compare YAML file (docs/compare.md)")->required();
  app.add_option("--set", o->sets, "Override a key: --set level_mm=2 (relative paths: from here)")
      ->type_name("KEY=VALUE");
  add_plugin_path_options(app, common);
  app.add_flag("--validate", o->validate_only, "Check the file without running it");
  app.add_flag("-q,--quiet", common.quiet, "No progress or informational messages");
  return [o, &common] {
    PluginHost plugins(search_options(common));
    std::vector<Override> overrides;
    for (const auto& s : o->sets) overrides.push_back(parse_override(s));
    const CompareConfig config = load_compare(o->file, overrides, plugins);
    if (o->validate_only) {
      std::printf("%s: valid (%zu costs)\n", o->file.c_str(), config.costs.size());
      return kExitOk;
    }
    HostServices services(common.quiet ? RP_LOG_ERROR : RP_LOG_WARNING, !common.quiet);
    services.cancel_on_sigint();
    run_compare(config, plugins, services);
    if (!common.quiet) std::printf("wrote %s/summary.md and the CSV and SVG files\n", config.output_dir.c_str());
    return kExitOk;
  };
}

}  // namespace regpipe::cli
