// Folders that exist only while outputs are written (an atomic write's temporary folder, a
// result set's staging folder) and the folders a run makes for its outputs, known to the
// process so that a terminating signal removes them, and the publication (the renames that
// make outputs appear) that such a signal never cuts in two.
//
// Every such folder is made here, under the same lock as the removal at exit, which keeps it
// until the process has ended; every temporary file lives inside a temporary folder. So nothing
// a writer makes can outlive the removal: a file being made while its folder is removed is
// removed with it (the removal retries), no file can be made in a folder that is gone, and a
// thread that would make a folder or publish afterwards waits for the end.
#pragma once

#include <filesystem>
#include <functional>
#include <system_error>
#include <vector>

namespace regpipe {

// Makes `path` (its parent exists) as a temporary folder, removed with its contents should
// the process be terminated. `ec` says why it could not be made.
void make_temporary_folder(const std::filesystem::path& path, std::error_code& ec);

// Makes `dir` and any missing folders above it, each removed should the process be terminated
// while it is empty (deeper ones first). Returns the folders it made, `dir` first. `ec` says why
// one could not be made (those made before stay made and known).
std::vector<std::filesystem::path> make_output_folders(const std::filesystem::path& dir, std::error_code& ec);

// A folder of either kind, no longer to be removed at termination.
void forget_temporary(const std::filesystem::path& path);

// Runs `rename_into_place` (renames only: quick, and needing no space) as one step against
// termination: a terminating signal arriving meanwhile waits until it has returned, and one
// that came first keeps it from starting, so that nothing appears afterwards.
void publish_outputs(const std::function<void()>& rename_into_place);

// For the termination path, whose next step ends the process: waits for a publication in
// progress, removes every known folder, and lets no folder be made or forgotten, nor a
// publication start, again.
void remove_temporaries_for_exit();

}  // namespace regpipe
