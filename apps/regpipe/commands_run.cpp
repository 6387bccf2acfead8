// regpipe run / regpipe validate
#include "commands.hpp"

#include <regpipe/host/driver.hpp>
#include <regpipe/host/pipeline.hpp>

#include <cstdio>

namespace regpipe::cli {
namespace {

struct PipelineOptions {
  std::string file;
  std::vector<std::string> sets;
};

void add_pipeline_options(CLI::App& app, PipelineOptions& o, CommonOptions& common) {
  app.add_option("pipeline", o.file, "Pipeline YAML file")->required();
  app.add_option("--set", o.sets,
                 "Override a key: --set inputs.moving=b.nii.gz (relative paths: from here)")
      ->type_name("KEY=VALUE");
  app.add_option("--plugin-path", common.plugin_paths, "Extra plugin folder or file (repeatable)")
      ->type_name("DIR");
}

std::vector<Override> overrides(const PipelineOptions& o) {
  std::vector<Override> out;
  for (const auto& s : o.sets) out.push_back(parse_override(s));
  return out;
}

}  // namespace

PluginSearchOptions search_options(const CommonOptions& c) {
  PluginSearchOptions o;
  for (const auto& p : c.plugin_paths) o.plugin_paths.emplace_back(p);
  return o;
}

Command add_run(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<PipelineOptions>();
  add_pipeline_options(app, *o, common);
  app.add_flag("-q,--quiet", common.quiet, "No progress or informational messages");
  app.add_flag("-v,--verbose", common.verbose, "More messages (repeat for debug)");
  return [o, &common] {
    PluginHost plugins(search_options(common));
    const Pipeline p = load_pipeline(o->file, overrides(*o), plugins);
    const int32_t level = common.quiet          ? RP_LOG_ERROR
                          : common.verbose >= 2 ? RP_LOG_DEBUG
                          : common.verbose == 1 ? RP_LOG_INFO
                                                : RP_LOG_WARNING;
    HostServices services(level, !common.quiet);
    services.cancel_on_sigint();
    if (p.inputs.moving.size() == 1) {
      run_pipeline(p, plugins, services);
      return kExitOk;
    }
    return run_batch(p, plugins, services) == 0 ? kExitOk : kExitBadInput;
  };
}

Command add_validate(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<PipelineOptions>();
  add_pipeline_options(app, *o, common);
  return [o, &common] {
    PluginHost plugins(search_options(common));
    const Pipeline p = load_pipeline(o->file, overrides(*o), plugins);
    check_pipeline_files(p);
    // The components a run would use here: a preference list's first that starts on this machine.
    HostServices services(RP_LOG_ERROR, false);
    const RegistrationComponents components = create_registration_components(p, plugins, services);
    std::printf("%s: valid; on this machine it runs:\n", o->file.c_str());
    for (const UsedComponent& c : components.used)
      std::printf("  %-9s %s\n", c.role.c_str(), describe_used(c).c_str());
    return kExitOk;
  };
}

}  // namespace regpipe::cli
