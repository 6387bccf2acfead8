// libFuzzer target: loading a pipeline with --set overrides (load_pipeline: YAML parsing, the
// overrides, validation against the schema and the built plugins' parameter schemas). The
// input is text: each line "--set key=value" is an override, every other line belongs to the
// pipeline file. Every refusal must be a UserError; anything else escaping or a crash is a
// finding.
#include "scratch_file.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/pipeline.hpp>

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The plugins next to the build's executables (build/plugins), loaded once.
  static const regpipe::PluginHost plugins{regpipe::PluginSearchOptions{}};
  std::istringstream input(std::string(reinterpret_cast<const char*>(data), size));
  std::string yaml;
  std::vector<regpipe::Override> overrides;
  const std::string set = "--set ";
  try {
    for (std::string line; std::getline(input, line);) {
      if (line.rfind(set, 0) == 0)
        overrides.push_back(regpipe::parse_override(line.substr(set.size())));
      else
        yaml += line + "\n";
    }
    const auto path = regpipe::fuzz::scratch_path("pipeline.yaml");
    regpipe::fuzz::write_file(path, reinterpret_cast<const uint8_t*>(yaml.data()), yaml.size());
    regpipe::load_pipeline(path, overrides, plugins);
  } catch (const regpipe::UserError&) {
  }
  return 0;
}
