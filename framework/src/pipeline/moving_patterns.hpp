// inputs.moving's patterns (`sub-*/anat/*_T1w.nii.gz`) and the folder each matched image's
// batch outputs go to.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace regpipe {

struct MatchedImage {
  std::filesystem::path path;
  // Relative to outputs.dir: the folders between the pattern's fixed part and the file,
  // then the file's stem, so that outputs mirror the input tree as BIDS derivatives do
  // (sub-01/anat/sub-01_T1w/ for data/sub-01/anat/sub-01_T1w.nii.gz under data/sub-*/anat/).
  std::filesystem::path output_folder;
};

// Whether any component of `path` holds a wildcard (*, ? or [).
bool is_pattern(const std::filesystem::path& path);

// The regular files `pattern` matches, sorted; a wildcard matches within one component and
// never a leading dot (hidden files and folders), as the shell's glob does.
std::vector<MatchedImage> expand_pattern(const std::filesystem::path& pattern);

}  // namespace regpipe
