// regpipe plugins [--json | --markdown [LIBRARY] | --check [PATH]]
#include "commands.hpp"
#include "plugin_listing.hpp"

#include <regpipe/host/plugin_check.hpp>

#include <cstdio>

namespace regpipe::cli {
namespace {

const char* verdict_name(CheckFinding::Verdict v) {
  switch (v) {
    case CheckFinding::Verdict::pass: return "PASS";
    case CheckFinding::Verdict::skip: return "SKIP";
    default: return "FAIL";
  }
}

// `--check`: a line per library problem and per component, then the counts; exit status 3
// when anything failed.
int print_check(const std::vector<std::filesystem::path>& libraries, double timeout_s) {
  if (libraries.empty()) {
    std::fprintf(stderr, "regpipe: error: plugins --check: no plugin library found\n");
    return kExitBadInput;
  }
  size_t counts[3] = {0, 0, 0};
  for (const CheckFinding& f : check_plugin_libraries(libraries, timeout_s)) {
    ++counts[int(f.verdict)];
    std::printf("%s  %s%s%s%s\n", verdict_name(f.verdict), f.component.empty() ? "" : (f.component + " in ").c_str(),
                f.library.filename().c_str(), f.detail.empty() ? "" : ": ", f.detail.c_str());
  }
  std::printf("plugins --check: %zu librar%s, %zu passed, %zu failed, %zu skipped\n", libraries.size(),
              libraries.size() == 1 ? "y" : "ies",
              counts[int(CheckFinding::Verdict::pass)], counts[int(CheckFinding::Verdict::fail)],
              counts[int(CheckFinding::Verdict::skip)]);
  return counts[int(CheckFinding::Verdict::fail)] == 0 ? kExitOk : kExitComponentFailure;
}

}  // namespace

Command add_plugins(CLI::App& app, CommonOptions& common) {
  struct Options {
    bool json = false;
    bool markdown = false;
    std::string library;
    std::string check_path;
    double timeout_s = 30.0;
    std::string child_library, child_component;  // a --check child's (plugin_check.hpp)
  };
  auto o = std::make_shared<Options>();
  auto* json = app.add_flag("--json", o->json, "Machine-readable output");
  auto* markdown = app.add_flag("--markdown", o->markdown, "Parameter tables in Markdown (for plugin READMEs)")
                       ->excludes(json);
  app.add_option("--library", o->library, "With --markdown: only this library (e.g. libregpipe_cost_cpu)");
  auto* check = app.add_option("--check", o->check_path,
                               "Load and exercise every component, each in a process of its own, and "
                               "report each failure (a crash, a hang, an exception, a non-finite cost, a "
                               "bad descriptor); PATH: only the libraries of that file or folder")
                    ->expected(0, 1)
                    ->type_name("[PATH]")
                    ->excludes(json)
                    ->excludes(markdown);
  app.add_option("--timeout", o->timeout_s, "With --check: the longest one plugin call may take, in seconds")
      ->check(CLI::Range(0.1, 1e6));
  add_plugin_path_options(app, common);
  app.add_option(kCheckLibraryOption, o->child_library)->group("");
  app.add_option(kCheckComponentOption, o->child_component)->group("");
  app.add_option(kCheckTimeoutOption, o->timeout_s)->group("");
  return [o, &common, check] {
    if (!o->child_library.empty()) {  // a --check child
      if (o->child_component.empty()) report_library_components(o->child_library);
      else exercise_component(o->child_library, o->child_component, o->timeout_s);
      return kExitOk;
    }
    PluginSearchOptions search = search_options(common);
    if (check->count() > 0) {
      if (!o->check_path.empty()) {
        if (!std::filesystem::exists(o->check_path)) {
          std::fprintf(stderr, "regpipe: error: plugins --check %s: no such file or folder\n", o->check_path.c_str());
          return kExitBadInput;
        }
        search = PluginSearchOptions{{o->check_path}, false, false, false};
      }
      return print_check(plugin_library_files(search), o->timeout_s);
    }
    PluginHost host(search);
    if (o->json) std::printf("%s\n", components_json(host).dump(2).c_str());
    else if (o->markdown) std::printf("%s", components_markdown(host, o->library).c_str());
    else std::printf("%s", components_text(host).c_str());
    return kExitOk;
  };
}

}  // namespace regpipe::cli
