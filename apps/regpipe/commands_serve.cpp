// regpipe serve
#include "commands.hpp"

#include <regpipe/host/serve.hpp>

namespace regpipe::cli {

Command add_serve(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto socket = std::make_shared<std::string>(o->socket.string());
  auto one_command = std::make_shared<bool>(false);
  app.add_option("--socket", *socket, "Where it listens (a Unix socket)")->type_name("PATH")->capture_default_str();
  app.add_option("--ready", o->warm, "Processes kept started and waiting")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--devices", o->devices, "CUDA devices whose contexts each waiting process starts (absent ones are skipped)")
      ->delimiter(',')
      ->check(CLI::Range(0, 63))  // the plugins' `device` range
      ->type_name("LIST")
      ->capture_default_str();
  app.add_option("--plugin-path", o->plugin_paths, "Extra plugin folder or file to load ahead (repeatable)")
      ->type_name("DIR");
  app.add_flag("--one-command", *one_command)->group("");  // how the server starts its processes
  return [o, socket, one_command] {
    o->socket = *socket;
    if (*one_command) return serve_one_command(*o, run_command_line);
    return serve(*o);
  };
}

}  // namespace regpipe::cli
