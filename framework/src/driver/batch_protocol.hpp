// What a batch's supervisor and its worker processes share: each image's own pipeline, and the
// lines a worker reports on its pipe (process/worker_process.hpp), tab-separated:
//
//   start <i>               image i (index into inputs.moving) is about to be registered
//   done <i> <entry>        image i is finished (its batch_report.json entry, one-line JSON)
//   summary <json>          the worker's totals (reference preparation, waits, I/O threads)
//   alive                   a sign of life, every two seconds (plugin_watchdog.cpp)
//   fault <kind> <call> <message>
//                           the worker is ending: kind "crash" (a fatal signal) or "timeout"
//                           (a plugin call past registration.evaluation_timeout_s); <call> is
//                           the plugin call that was running ("cost 'x' evaluate"), or empty
#pragma once

#include <regpipe/host/pipeline.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
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

// The --batch-worker value, "<count>:<fingerprint>:<ranges>" ("10:9f2c...:0-3,5,7-9"): the
// images to do as ranges (a long batch's list stays far below the kernel's 128 KiB limit on
// one argument) and the list they index, since the worker expands inputs.moving again: a glob
// that finds other files by then must not make it register the wrong images.
std::string encode_worker_task(const Pipeline& batch, const std::vector<size_t>& todo);
// The images of a task; UserError when it is malformed or indexes another list.
std::vector<size_t> decode_worker_task(const Pipeline& batch, const std::string& task);

}  // namespace regpipe
