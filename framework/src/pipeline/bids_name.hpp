// The entities of a BIDS file name (sub-01_ses-2_acq-mprage_T1w.nii.gz: sub, ses, acq and
// the suffix T1w), for a batch's report to say which subject and session each result is.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace regpipe {

struct BidsName {
  std::vector<std::pair<std::string, std::string>> entities;  // in the name's order
  std::string suffix;                                         // T1w, bold, ...
};

// The entities when the file name is a BIDS name (it starts with sub-<label> and every part
// but the last is key-value), else nothing.
std::optional<BidsName> parse_bids_name(const std::filesystem::path& path);

}  // namespace regpipe
