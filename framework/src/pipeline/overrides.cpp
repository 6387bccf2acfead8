#include <regpipe/host/error.hpp>
#include <regpipe/host/pipeline.hpp>

#include "pipeline/overrides.hpp"

#include <sstream>

namespace regpipe {

Override parse_override(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UserError("--set " + text + ": expected key=value, e.g. --set inputs.moving=b.nii.gz");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

namespace {

// The deepest pipeline key has five segments (registration.cost.params.<name>, or a level's
// list in one more): a longer one is a mistake, and its recursion must not reach the stack's end.
constexpr size_t kMaxKeySegments = 16;

// A key as a message shows it: a hostile one may be megabytes long.
std::string shown(const std::string& key) {
  return key.size() <= 80 ? key : key.substr(0, 60) + "... (" + std::to_string(key.size()) + " characters)";
}

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream s(key);
  std::string part;
  while (std::getline(s, part, '.')) {
    if (part.empty()) throw UserError("--set " + shown(key) + ": empty key segment");
    if (parts.size() == kMaxKeySegments)
      throw UserError("--set " + shown(key) + ": more than " + std::to_string(kMaxKeySegments) +
                      " key segments; pipeline keys have at most 5 (registration.cost.params.bins)");
    parts.push_back(part);
  }
  return parts;
}

// Sets root[a][b]...[z] = value, creating maps on the way. Works on yaml-cpp node handles:
// assigning to a handle obtained from operator[] writes into the tree.
void set_path(YAML::Node node, const std::vector<std::string>& parts, size_t i,
              const YAML::Node& value, const std::string& key) {
  if (!node.IsMap() && !node.IsNull())
    throw UserError("--set " + key + ": " +
                    (i == 0 ? std::string("the pipeline's top level") : "'" + parts[i - 1] + "' in the pipeline") +
                    " is not a map");
  if (i + 1 == parts.size()) {
    node[parts[i]] = value;
    return;
  }
  YAML::Node child = node[parts[i]];
  if (!child.IsDefined() || child.IsNull()) child = YAML::Node(YAML::NodeType::Map);
  set_path(child, parts, i + 1, value, key);
}

}  // namespace

void apply_overrides(YAML::Node& root, const std::vector<Override>& overrides) {
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const auto& o : overrides) {
    YAML::Node value;
    try {
      value = YAML::Load(o.value);
    } catch (const YAML::Exception& e) {
      throw UserError("--set " + o.key + "=" + o.value + ": not a YAML value: " + e.msg);
    }
    if (!value.IsDefined() || value.IsNull()) value = YAML::Node(o.value);
    set_path(root, split_key(o.key), 0, value, o.key);
  }
}

}  // namespace regpipe
