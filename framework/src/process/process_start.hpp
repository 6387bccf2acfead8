// When this process started, on the steady clock: a batch's report shows how much of its time
// went before its own code ran (exec, loading libraries and plugins, the pipeline).
#pragma once

#include <chrono>
#include <optional>

namespace regpipe {

// From /proc/self/stat's start time (clock ticks since boot, so 10 ms steps); nothing where it
// cannot be read.
std::optional<std::chrono::steady_clock::time_point> process_start_time();

}  // namespace regpipe
