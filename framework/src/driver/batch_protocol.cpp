#include "driver/batch_protocol.hpp"

#include "driver/pipeline_digest.hpp"
#include "pipeline/bids_name.hpp"

#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>

#include <charconv>

namespace regpipe {
namespace {

std::string moving_list_fingerprint(const Pipeline& batch) {
  std::string paths;
  for (const ImageInput& m : batch.inputs.moving) paths += m.path.string() + '\n';
  return fingerprint(paths);
}

// A number at `text`'s start, which it then leaves; nullopt when there is none.
std::optional<size_t> take_number(std::string_view& text) {
  size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(size_t(end - text.data()));
  return value;
}

}  // namespace

nlohmann::json bids_entities(const std::filesystem::path& path) {
  const std::optional<BidsName> name = parse_bids_name(path);
  if (!name) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : name->entities) out[key] = value;
  out["suffix"] = name->suffix;
  return out;
}

std::string encode_worker_task(const Pipeline& batch, const std::vector<size_t>& todo) {
  std::string ranges;
  for (size_t k = 0; k < todo.size();) {
    size_t last = k;
    while (last + 1 < todo.size() && todo[last + 1] == todo[last] + 1) ++last;
    if (!ranges.empty()) ranges += ',';
    ranges += std::to_string(todo[k]);
    if (last > k) ranges.append("-").append(std::to_string(todo[last]));
    k = last + 1;
  }
  return std::to_string(batch.inputs.moving.size()) + ":" + moving_list_fingerprint(batch) + ":" + ranges;
}

std::vector<size_t> decode_worker_task(const Pipeline& batch, const std::string& task) {
  const size_t n = batch.inputs.moving.size();
  const std::string expected = std::to_string(n) + ":" + moving_list_fingerprint(batch) + ":";
  if (task.compare(0, expected.size(), expected) != 0)
    throw UserError(std::string(kBatchWorkerOption) + ": the batch's image list (" + std::to_string(n) +
                    " images now) is not the one the batch started with; were files added to or removed "
                    "from the inputs.moving glob?");
  std::string_view rest(task);
  rest.remove_prefix(expected.size());
  std::vector<size_t> todo;
  while (!rest.empty()) {
    const std::optional<size_t> first = take_number(rest);
    std::optional<size_t> last = first;
    if (first && rest.starts_with('-')) {
      rest.remove_prefix(1);
      last = take_number(rest);
    }
    if (!first || !last || *first > *last || *last >= n || (!rest.empty() && !rest.starts_with(',')))
      throw UserError(std::string(kBatchWorkerOption) + ": malformed image list '" + task + "'");
    if (!rest.empty()) rest.remove_prefix(1);
    for (size_t i = *first; i <= *last; ++i) todo.push_back(i);
  }
  return todo;
}

}  // namespace regpipe
