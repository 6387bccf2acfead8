// What a batch's supervisor and its worker processes share: each image's own pipeline, and the
// lines a worker reports on its pipe (process/worker_process.hpp), tab-separated:
//
//   next                    the worker is ready to read another image; the supervisor
//                           answers on the task channel (kWorkerTaskFd) with its index into
//                           inputs.moving, or `end` when there is none for it
//   start <i>               image i is about to be registered
//   done <i> <entry>        image i is finished (its batch_report.json entry, one-line JSON)
//   summary <json>          the worker's totals (reference preparation, waits, I/O threads)
//   alive                   a sign of life, every two seconds (plugin_watchdog.cpp)
//   at <event> <seconds>    when the worker reached a point of its start (process_start,
//                           entered, components, reference_read, reference_prepared), on the
//                           steady clock, for the report's timeline
//   fault <kind> <call> <message> <i>
//                           the worker is ending: kind "crash" (a fatal signal) or "timeout"
//                           (a plugin call past registration.evaluation_timeout_s); <call> is
//                           the plugin call that was running ("cost 'x' evaluate"), or empty;
//                           <i> the image whose registering thread it hit, or empty when
//                           unknown (with several images in flight, execution.
//                           registrations_per_worker, the others are not to blame)
#pragma once

#include <regpipe/host/pipeline.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace regpipe {

// The batch's pipeline with moving image i only, its outputs in its folder under outputs.dir
// (ImageInput::output_folder).
inline Pipeline image_pipeline(const Pipeline& batch, size_t i) {
  Pipeline one = batch;
  one.inputs.moving = {batch.inputs.moving[i]};
  one.outputs.dir = batch.outputs.dir / batch.inputs.moving[i].output_folder;
  return one;
}

// A batch_report.json entry's "bids": a BIDS name's entities and suffix ({"sub": "01", "ses":
// "2", "suffix": "T1w"}), else null.
nlohmann::json bids_entities(const std::filesystem::path& path);

// The --batch-worker value, "<count>:<fingerprint>" of the image list that the indices the
// supervisor hands out refer to: the worker expands inputs.moving again, and a glob that finds
// other files by then must not make it register the wrong images.
std::string worker_batch_key(const Pipeline& batch);
// UserError when the worker's list is not the supervisor's.
void check_worker_batch_key(const Pipeline& batch, const std::string& key);

// Worker side: an "at" line for `event` at `t`.
void report_moment(const std::string& event, std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now());

// Worker side: the images the supervisor hands out, one per next() (nullopt once it has no
// more for this worker, or has gone). One thread at a time.
class ImageFeed {
 public:
  explicit ImageFeed(size_t images) : images_(images) {}
  std::optional<size_t> next();

 private:
  size_t images_;
  bool ended_ = false;
};

}  // namespace regpipe
