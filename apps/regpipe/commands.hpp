// The regpipe subcommands. Each registers its options on the CLI11 app and returns the
// function that runs it (exit status).
#pragma once

#include <regpipe/host/plugin_host.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace regpipe::cli {

// Options every subcommand that loads plugins shares.
struct CommonOptions {
  std::vector<std::string> plugin_paths;
  bool plugin_override = false;  // an id two libraries claim: the first in the search order
  bool quiet = false;
  int verbose = 0;
};

using Command = std::function<int()>;

// The plugin search path from the common options.
PluginSearchOptions search_options(const CommonOptions& c);
// --plugin-path and --plugin-override on a subcommand that loads plugins.
void add_plugin_path_options(CLI::App& app, CommonOptions& common);

Command add_run(CLI::App& app, CommonOptions& common);
Command add_validate(CLI::App& app, CommonOptions& common);
Command add_plugins(CLI::App& app, CommonOptions& common);
Command add_phantom(CLI::App& app);
Command add_compare(CLI::App& app, CommonOptions& common);
Command add_transform(CLI::App& app);
Command add_flirt(CLI::App& app, CommonOptions& common);
Command add_apply(CLI::App& app, CommonOptions& common);
Command add_serve(CLI::App& app);

// Parses `arguments` (argv, the program's name first) and runs the subcommand: its exit status.
int run_command_line(const std::vector<std::string>& arguments);

// Exit statuses.
constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitComponentFailure = 3;
constexpr int kExitCancelled = 130;

}  // namespace regpipe::cli
