#include "pipeline/moving_patterns.hpp"

#include <regpipe/host/pipeline.hpp>

#include <algorithm>
#include <fnmatch.h>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

bool has_wildcard(const std::string& component) {
  return component.find_first_of("*?[") != std::string::npos;
}

// Extends each of `folders` by the component `part` (a wildcard or a literal name): the
// folders, or at the last component the regular files, that exist.
std::vector<fs::path> step(const std::vector<fs::path>& folders, const std::string& part, bool last) {
  std::vector<fs::path> out;
  std::error_code ec;
  const auto wanted = [&](const fs::path& p) {
    return last ? fs::is_regular_file(p, ec) : fs::is_directory(p, ec);
  };
  for (const fs::path& folder : folders) {
    if (!has_wildcard(part)) {
      if (wanted(folder / part)) out.push_back(folder / part);
      continue;
    }
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (::fnmatch(part.c_str(), entry.path().filename().c_str(), FNM_PERIOD) == 0 && wanted(entry.path()))
        out.push_back(entry.path());
  }
  return out;
}

}  // namespace

bool is_pattern(const fs::path& path) {
  return std::any_of(path.begin(), path.end(), [](const fs::path& c) { return has_wildcard(c.string()); });
}

std::vector<MatchedImage> expand_pattern(const fs::path& pattern) {
  std::vector<std::string> parts;
  for (const fs::path& c : pattern) parts.push_back(c.string());
  if (parts.empty()) return {};
  const size_t first_wildcard =
      size_t(std::find_if(parts.begin(), parts.end(), has_wildcard) - parts.begin());
  fs::path root;  // the fixed part: outputs mirror what lies below it
  for (size_t i = 0; i < std::min(first_wildcard, parts.size() - 1); ++i) root /= parts[i];
  std::vector<fs::path> found{root};
  for (size_t i = std::min(first_wildcard, parts.size() - 1); i < parts.size(); ++i)
    found = step(found, parts[i], i + 1 == parts.size());
  std::sort(found.begin(), found.end());
  std::vector<MatchedImage> out;
  for (const fs::path& path : found)
    out.push_back({path, path.parent_path().lexically_relative(root) / moving_stem(path)});
  for (MatchedImage& m : out) m.output_folder = m.output_folder.lexically_normal();
  return out;
}

}  // namespace regpipe
