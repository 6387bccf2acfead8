#include "pipeline/bids_name.hpp"

#include <regpipe/host/pipeline.hpp>

#include <sstream>

namespace regpipe {

std::optional<BidsName> parse_bids_name(const std::filesystem::path& path) {
  std::vector<std::string> parts;
  std::istringstream stem(moving_stem(path));
  for (std::string part; std::getline(stem, part, '_');) parts.push_back(part);
  if (parts.size() < 2) return std::nullopt;
  BidsName name;
  name.suffix = parts.back();
  if (name.suffix.empty() || name.suffix.find('-') != std::string::npos) return std::nullopt;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const size_t dash = parts[i].find('-');
    if (dash == 0 || dash == std::string::npos || dash + 1 == parts[i].size()) return std::nullopt;
    name.entities.emplace_back(parts[i].substr(0, dash), parts[i].substr(dash + 1));
  }
  if (name.entities.front().first != "sub") return std::nullopt;
  return name;
}

}  // namespace regpipe
