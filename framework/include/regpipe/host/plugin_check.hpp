// `regpipe plugins --check [PATH]`: a validator for regpipe's ABI (as clap-validator is for
// CLAP's). Every library is loaded, and every component created and exercised, in a child
// process of its own, so that a library whose loading aborts, a cost that segfaults or
// hangs, or an exception escaping across the ABI is reported as that component's failure
// instead of ending the check.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace regpipe {

struct CheckFinding {
  enum class Verdict { pass, fail, skip };
  std::filesystem::path library;
  std::string component;  // "cost 'cpu.cr'"; empty for the library itself (loading, descriptors)
  Verdict verdict = Verdict::pass;
  std::string detail;     // why it failed or was skipped
};

// Checks each library: loaded (descriptors validated as the host does), then each component
// exercised (exercise_component) in a child process that may take `timeout_s` per plugin call.
// Two libraries claiming one id fail too.
std::vector<CheckFinding> check_plugin_libraries(const std::vector<std::filesystem::path>& libraries,
                                                 double timeout_s);

// How check_plugin_libraries starts its children: `regpipe plugins <kCheckLibraryOption> FILE
// [<kCheckComponentOption> KIND:ID <kCheckTimeoutOption> SECONDS]`.
inline constexpr const char* kCheckLibraryOption = "--check-library";
inline constexpr const char* kCheckComponentOption = "--check-component";
inline constexpr const char* kCheckTimeoutOption = "--check-timeout";

// Child side, reporting on the worker pipe (process/worker_process.hpp). Loads `library`
// alone and lists its components and its load problems.
void report_library_components(const std::filesystem::path& library);
// Loads `library` alone and exercises one component ("cost:cpu.cr"): created with its
// defaults, then a cost set a small phantom as reference and moving image and asked for a few
// transforms (finite costs, overlaps in [0, 1], no overlap far away); an optimizer run on a
// quadratic objective (it must return OK and improve on the start); a resampler asked for
// the identity (the phantom back, near enough); destroyed. Every plugin call is watched
// (plugin_watchdog.hpp) with `timeout_s`.
void exercise_component(const std::filesystem::path& library, const std::string& kind_and_id, double timeout_s);

}  // namespace regpipe
