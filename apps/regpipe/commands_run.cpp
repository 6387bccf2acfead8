// regpipe run / regpipe validate
#include "commands.hpp"

#include <regpipe/host/driver.hpp>
#include <regpipe/host/invocation.hpp>
#include <regpipe/host/pipeline.hpp>
#include <regpipe/host/plugin_watchdog.hpp>

#include <cstdio>

namespace regpipe::cli {
namespace {

struct PipelineOptions {
  std::string file;
  std::vector<std::string> sets;
  std::string devices;  // --devices: execution.devices
  unsigned workers = 0;  // --workers: execution.workers
};

void add_pipeline_options(CLI::App& app, PipelineOptions& o, CommonOptions& common) {
  app.add_option("pipeline", o.file, "Pipeline YAML file")->required();
  app.add_option("--set", o.sets,
                 "Override a key: --set inputs.moving=b.nii.gz (relative paths: from here)")
      ->type_name("KEY=VALUE");
  add_plugin_path_options(app, common);
}

std::vector<Override> overrides(const PipelineOptions& o) {
  std::vector<Override> out;
  for (const auto& s : o.sets) out.push_back(parse_override(s));
  // "all" as it is; "0,1" as the YAML list [0,1]
  if (!o.devices.empty())
    out.push_back({"execution.devices", o.devices == "all" ? o.devices : "[" + o.devices + "]"});
  if (o.workers > 0) out.push_back({"execution.workers", std::to_string(o.workers)});
  return out;
}

// This command line, after the program name: a batch worker is started with it again.
std::vector<std::string> run_again() {
  const std::vector<std::string>& line = command_line();
  return std::vector<std::string>(line.begin() + (line.empty() ? 0 : 1), line.end());
}

}  // namespace

PluginSearchOptions search_options(const CommonOptions& c) {
  PluginSearchOptions o;
  for (const auto& p : c.plugin_paths) o.plugin_paths.emplace_back(p);
  o.allow_override = c.plugin_override;
  return o;
}

void add_plugin_path_options(CLI::App& app, CommonOptions& common) {
  app.add_option("--plugin-path", common.plugin_paths, "Extra plugin folder or file (repeatable)")
      ->type_name("DIR");
  app.add_flag("--plugin-override", common.plugin_override,
               "Where two libraries provide one component id, use the first in the search order "
               "(--plugin-path first) instead of refusing it");
}

Command add_run(CLI::App& app, CommonOptions& common) {
  auto o = std::make_shared<PipelineOptions>();
  add_pipeline_options(app, *o, common);
  app.add_option("--devices", o->devices,
                 "CUDA devices of a batch's workers, one worker each: all, or indices (0,1; 0,0 puts "
                 "two workers on device 0); overrides execution.devices")
      ->type_name("all|LIST");
  app.add_option("--workers", o->workers, "Worker processes of a batch; overrides execution.workers")
      ->check(CLI::Range(1, 256));
  app.add_flag("-q,--quiet", common.quiet, "No progress or informational messages");
  app.add_flag("-v,--verbose", common.verbose, "More messages (repeat for debug)");
  // Hidden: how a batch's supervisor starts its worker process (batch_supervisor.cpp).
  auto worker_task = std::make_shared<std::string>();
  app.add_option(kBatchWorkerOption, *worker_task)->group("");
  return [o, &common, worker_task] {
    PluginHost plugins(search_options(common));
    const Pipeline p = load_pipeline(o->file, overrides(*o), plugins);
    const int32_t level = common.quiet          ? RP_LOG_ERROR
                          : common.verbose >= 2 ? RP_LOG_DEBUG
                          : common.verbose == 1 ? RP_LOG_INFO
                                                : RP_LOG_WARNING;
    HostServices services(level, !common.quiet);
    services.cancel_on_sigint();
    const bool worker = !worker_task->empty();
    if (p.inputs.moving.size() == 1 || worker)  // the processes that call plugins
      watch_plugin_calls(p.registration.evaluation_timeout_s, "registration.evaluation_timeout_s", worker);
    if (worker) {
      run_batch_worker(p, plugins, services, *worker_task);
      return kExitOk;
    }
    if (p.inputs.moving.size() == 1) {
      use_first_device(p.execution);
      run_pipeline(p, plugins, services);
      return kExitOk;
    }
    const BatchOutcome batch = run_batch(p, services, run_again());
    if (batch.stopped_with != 0) return batch.stopped_with;
    return batch.failures == 0 ? kExitOk : kExitBadInput;
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
    if (!p.stages.empty()) {  // registration.stages: each stage's components
      const StageComponents components = create_stage_components(p, plugins, services);
      std::printf("%s: valid; on this machine it runs:\n", o->file.c_str());
      for (const auto& [label, c] : components.used)
        std::printf("  %s %-9s %s\n", label.c_str(), c.role.c_str(), describe_used(c).c_str());
      return kExitOk;
    }
    const RegistrationComponents components = create_registration_components(p, plugins, services);
    std::printf("%s: valid; on this machine it runs:\n", o->file.c_str());
    for (const UsedComponent& c : components.used)
      std::printf("  %-9s %s\n", c.role.c_str(), describe_used(c).c_str());
    return kExitOk;
  };
}

}  // namespace regpipe::cli
