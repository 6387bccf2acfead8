#include "driver/batch_protocol.hpp"

#include "driver/pipeline_digest.hpp"
#include "process/worker_process.hpp"
#include "pipeline/bids_name.hpp"

#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>

#include <charconv>
#include <cstdio>

namespace regpipe {
namespace {

std::string moving_list_fingerprint(const Pipeline& batch) {
  std::string paths;
  for (const ImageInput& m : batch.inputs.moving) paths += m.path.string() + '\n';
  return fingerprint(paths);
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

std::string worker_batch_key(const Pipeline& batch) {
  return std::to_string(batch.inputs.moving.size()) + ":" + moving_list_fingerprint(batch);
}

void check_worker_batch_key(const Pipeline& batch, const std::string& key) {
  if (key != worker_batch_key(batch))
    throw UserError(std::string(kBatchWorkerOption) + ": the batch's image list (" +
                    std::to_string(batch.inputs.moving.size()) +
                    " images now) is not the one the batch started with; were files added to or removed "
                    "from the inputs.moving glob?");
}

void report_moment(const std::string& event, std::chrono::steady_clock::time_point t) {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.6f", std::chrono::duration<double>(t.time_since_epoch()).count());
  worker_report("at\t" + event + "\t" + seconds);
}

std::optional<size_t> ImageFeed::next() {
  if (ended_) return std::nullopt;
  worker_report("next");
  const std::optional<std::string> answer = worker_task_line();
  size_t index = 0;
  const char* end = answer ? answer->data() + answer->size() : nullptr;
  if (answer && !answer->empty() && std::from_chars(answer->data(), end, index).ptr == end && index < images_)
    return index;
  ended_ = true;  // "end", or the supervisor gone
  return std::nullopt;
}

}  // namespace regpipe
