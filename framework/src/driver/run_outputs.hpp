// What `regpipe run` writes for one registration, shared by the single run and the batch.
#pragma once

#include <regpipe/host/driver.hpp>

#include "driver/report.hpp"

#include <chrono>
#include <filesystem>
#include <optional>

namespace regpipe {

// Creates the output folder if missing; fails before any work when it cannot be made or written.
void prepare_output_dir(const std::filesystem::path& dir);

// Writes the pipeline's outputs (transforms, registered image, QA picture, report.json, each
// atomically) into p.outputs.dir. `start` is when the run began (the report's total time);
// `phases` brings the reading and registration times and gets the writing time. Returns the
// mean displacement error against evaluation.truth when the pipeline has one.
std::optional<double> write_outputs(const Pipeline& p, const RegistrationImages& images,
                                    const RegistrationResult& result, const PluginHost& plugins,
                                    HostServices& services, std::chrono::steady_clock::time_point start,
                                    PhaseSeconds& phases);

}  // namespace regpipe
