// `regpipe flirt`: FSL FLIRT's command line (flirt -in -ref -out -omat ...) run by regpipe's
// pipeline machinery, writing the files FLIRT writes. docs/flirt.md lists each flag and where
// regpipe differs from FLIRT.
#pragma once

#include <regpipe/host/host_services.hpp>
#include <regpipe/host/pipeline.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace regpipe {

struct FlirtCommand {
  std::vector<Override> keys;  // the pipeline: inputs, registration, outputs.interpolation/datatype
  std::optional<std::filesystem::path> out_image, out_matrix, init;
  bool apply_only = false;         // -applyxfm / -applyisoxfm: no registration
  std::optional<double> iso_mm;    // -applyisoxfm: the reference grid resampled to this voxel size
  bool verbose = false;            // -v
  std::vector<std::string> notes;  // flags accepted but without effect here, said once each
};

// FLIRT's arguments (after "flirt"): -flag value and --flag=value forms, FLIRT's defaults
// (corratio, 256 bins, 12 DOF, search -90..90 degrees, trilinear output). Throws UserError
// naming the flag: unknown, missing or bad value, FLIRT features regpipe does not have.
FlirtCommand parse_flirt_arguments(const std::vector<std::string>& args);

// Runs it: the registration (unless apply_only), then -omat (FLIRT's .mat) and -out (on the
// reference grid with its header). Throws UserError / ComponentError as `regpipe run` does.
void run_flirt(const FlirtCommand& command, const PluginHost& plugins, HostServices& services);

}  // namespace regpipe
