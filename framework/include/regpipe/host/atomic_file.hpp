// Atomic output: write to a temporary file (in a hidden temporary folder of the destination
// folder), then rename over the destination. Readers never see a half-written file, and a
// failed write, or a terminating signal, leaves nothing.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace regpipe {

// The extension that names a file's format, ".gz" included: ".nii.gz" for "a.b.nii.gz",
// ".mat" for "x.mat", "" for "README". Case is kept.
std::string full_extension(const std::filesystem::path& path);

// Calls write(tmp) with a temporary path that keeps the destination's file name (so that
// format detection by extension still works, e.g. ".nii.gz"): "<folder>/.<stem>.partial-<pid>-<n>/<name>".
// Then renames it onto `path`.
// On any exception the temporary is removed and the exception propagates. Throws UserError
// when the folder does not exist or is not writable.
void write_atomically(const std::filesystem::path& path,
                      const std::function<void(const std::filesystem::path& tmp)>& write);

// The same for a file that brings companions named after it with other extensions (an
// Analyze/NIfTI pair: write(".x.partial-1-0/x.hdr") also writes ".x.partial-1-0/x.img"). The
// companions are renamed into place first, the main file last, so a reader that finds the
// new main file finds its data; on failure every temporary is removed.
void write_atomically(const std::filesystem::path& path,
                      const std::vector<std::string>& companion_extensions,
                      const std::function<void(const std::filesystem::path& tmp)>& write);

// Convenience for text files.
void write_text_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace regpipe
