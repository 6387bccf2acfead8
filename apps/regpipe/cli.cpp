// The command line: its subcommands, parsed and run, errors turned into exit statuses.
#include "commands.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/invocation.hpp>

#include <cstdio>
#include <map>

namespace regpipe::cli {

int run_command_line(const std::vector<std::string>& arguments) {
  std::vector<const char*> argv;
  for (const std::string& a : arguments) argv.push_back(a.c_str());
  const int argc = int(argv.size());
  regpipe::set_command_line(argc, argv.data());
  CLI::App app{"regpipe: plugin-based 3D medical image registration (CPU and CUDA backends)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("regpipe ") + REGPIPE_VERSION);
  CommonOptions common;
  std::map<CLI::App*, Command> commands;
  auto add = [&](const char* name, const char* help) { return app.add_subcommand(name, help); };
  CLI::App* run = add("run", "Run a registration pipeline");
  commands[run] = add_run(*run, common);
  CLI::App* validate = add("validate", "Check a pipeline file without running it");
  commands[validate] = add_validate(*validate, common);
  CLI::App* plugins = add("plugins", "List the available components and their parameters");
  commands[plugins] = add_plugins(*plugins, common);
  CLI::App* phantom = add("phantom", "Write a synthetic two-contrast head phantom with a known misalignment, and a pipeline that recovers it");
  commands[phantom] = add_phantom(*phantom);
  CLI::App* compare = add("compare", "Compare cost functions on one image pair: agreement, speed, profiles, registrations");
  commands[compare] = add_compare(*compare, common);
  CLI::App* transform = add("transform", "Convert, concatenate and invert affine transform files (FSL, ITK, ANTs, world)");
  commands[transform] = add_transform(*transform);
  CLI::App* flirt = add("flirt", "FSL FLIRT's command line (flirt -in -ref -out -omat ...), run by regpipe");
  commands[flirt] = add_flirt(*flirt, common);
  CLI::App* apply = add("apply", "Resample an image onto a reference grid through a transform file or a chain of them");
  commands[apply] = add_apply(*apply, common);
  CLI::App* serve = add("serve", "Keep regpipe processes started ahead (CUDA too) for the commands that name this server in REGPIPE_SERVER");
  commands[serve] = add_serve(*serve);

  try {
    app.parse(argc, argv.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  try {
    for (const auto& [sub, command] : commands)
      if (sub->parsed()) return command();
  } catch (const regpipe::UserError& e) {
    std::fprintf(stderr, "regpipe: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const regpipe::ComponentError& e) {
    std::fprintf(stderr, "regpipe: error: %s\n", e.what());
    return e.status() == RP_CANCELLED ? kExitCancelled
           : e.status() == RP_INVALID_ARGUMENT ? kExitBadInput
                                               : kExitComponentFailure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regpipe: internal error: %s\n", e.what());
    return kExitInternal;
  }
  return kExitInternal;
}

}  // namespace regpipe::cli
