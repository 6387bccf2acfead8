// Files and folders that exist only while outputs are written (an atomic write's temporary, a
// result set's staging folder), known to the process so that a terminating signal removes
// them, and the publication (the renames that make outputs appear) that such a signal never
// cuts in two.
#pragma once

#include <filesystem>
#include <functional>

namespace regpipe {

// A temporary file or folder, removed (with its contents) should the process be terminated.
void register_temporary(const std::filesystem::path& path);
// A folder this run made for its outputs, removed should the process be terminated while it
// is empty (deeper paths go first: a staging folder inside it, then it).
void register_new_folder(const std::filesystem::path& path);
// Either kind, no longer to be removed.
void forget_temporary(const std::filesystem::path& path);

// Runs `rename_into_place` (renames only: quick, and needing no space) as one step against
// termination: a terminating signal arriving meanwhile waits until it has returned. Throws
// UserError when the process is already terminating, so that nothing appears afterwards.
void publish_outputs(const std::function<void()>& rename_into_place);

// For the termination path: waits for a publication in progress, removes every registered
// temporary, and lets no publication start again.
void remove_temporaries_for_exit();

}  // namespace regpipe
