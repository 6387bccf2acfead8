// "Did you mean" suggestions for misspelled keys, ids and choices.
#pragma once

#include <string>
#include <vector>

namespace regpipe {

// The candidate closest to `word` by edit distance, if it is close enough to be a likely
// typo (distance <= max(2, len/3)); empty otherwise.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

std::string join(const std::vector<std::string>& items, const std::string& separator);

}  // namespace regpipe
