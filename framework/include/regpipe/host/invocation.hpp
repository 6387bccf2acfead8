// How this process was started, for the reports that must say how they were made.
#pragma once

#include <string>
#include <vector>

namespace regpipe {

// Set once by the CLI's main, before any work.
void set_command_line(int argc, const char* const* argv);
// The arguments as given (empty when regpipe is used as a library).
const std::vector<std::string>& command_line();
// This machine's host name.
std::string host_name();
// Now, in UTC, as ISO 8601 ("2026-11-25T12:00:00Z").
std::string utc_timestamp();

}  // namespace regpipe
