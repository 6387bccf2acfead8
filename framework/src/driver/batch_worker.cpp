// The worker process of a batch (batch_supervisor.cpp starts it): one reference, many moving
// images (Li & Kumar 2014 suggest reusing the reference's preprocessing). The components are
// created, and the reference read and prepared (pyramid, centre of mass, mass radius), once
// for the images the supervisor hands this worker, one at a time as its read-ahead asks for
// them. Each image is reported to the supervisor as it starts and as it finishes
// (batch_protocol.hpp), so that a plugin crash or hang on one image costs only that image.
//
// execution.registrations_per_worker: several images register at once, each on a thread (a
// lane) with its own components, sharing the prepared reference and, on a GPU, the process's
// one CUDA context (two worker processes on one GPU time-slice it instead); each lane's
// plugin calls stay on its thread, one at a time per instance as abi.h asks.
//
// On a GPU a registration takes a fraction of the time its files do (an H100 with cuda.cr
// registered chris_PD-like images in 0.14 s each, reading one .nii.gz took 0.24 s and writing
// the registered image 0.46-1.5 s: ITK's gzip is single-threaded), so with
// outputs.parallel_io the files move to worker threads: a read-ahead reads the next moving
// images while one registers, and a write-behind encodes and writes each result's files while
// the next registers. Every plugin call of a registration (cost, optimizer, resampler) stays on
// its registering thread; on a GPU the registered images are resampled behind the
// registrations, by one thread with a resampler of its own (elsewhere on the registering
// thread); the I/O workers run ITK readers and writers and the report only. Results, reports
// and console lines come out in the order the registrations end: the images' order with one
// lane, as in the sequential batch.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/io_pipeline.hpp>
#include <regpipe/host/plugin_watchdog.hpp>
#include <regpipe/host/resample_image.hpp>
#include <regpipe/host/transform_io.hpp>
#include <regpipe_common/usable_cores.hpp>

#include "driver/elapsed.hpp"
#include "driver/batch_protocol.hpp"
#include "driver/report.hpp"
#include "driver/run_outputs.hpp"
#include "process/process_start.hpp"
#include "process/worker_process.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace regpipe {
namespace {


// How many files are read ahead and written behind. Each read-ahead image holds a moving
// image (and its weight) as float32, each queued write a registered image on the reference
// grid: a 256x256x160 volume is 42 MB, so the bounds keep a batch within a few hundred MB.
struct BatchIo {
  size_t readers = 0, read_ahead = 1;  // threads; images read beyond those registering
  size_t writers = 0, write_queue = 1;  // threads; results handed over and not yet written
};

// `lanes`: the images registered at once.
BatchIo batch_io(bool parallel, size_t lanes) {
  if (!parallel) return {};
  const size_t cores = regpipe_common::usable_cores();
  BatchIo io;
  // A reader per image registered at once and one more, on a machine with cores to spare: with
  // 4 at once on an H100's 16 cores the registrations waited 0.00 s for a moving image.
  io.readers = cores >= 8 ? std::min(lanes + 1, cores / 4) : 1;
  io.read_ahead = io.readers + lanes;
  // Writing (gzip) takes 3-10 registrations: several writers, leaving cores to the
  // registration's own threads (a CPU cost) and the readers.
  io.writers = std::clamp<size_t>((cores - std::min<size_t>(cores, 2)) / 3, 1, 4);
  io.write_queue = io.writers + lanes;
  return io;
}

// A moving image read by the read-ahead, or why it could not be.
struct MovingRead {
  size_t index = 0;           // into inputs.moving
  RegistrationImages images;  // moving and moving_weight
  std::exception_ptr error;
  double seconds = 0.0;
};

// One image of the batch from its read to its batch_report entry.
struct ImageJob {
  size_t index = 0;
  std::string path;
  Pipeline one;  // the pipeline with this image only and its own outputs folder
  PhaseSeconds phases;
  double seconds_resampling = PhaseSeconds::kNotReached;  // the part of phases.writing here
  double seconds = 0.0;  // the time spent on it in all threads
  bool failed = false;  // before its files: read, registration, resampling
  bool cancelled = false;  // Ctrl-C while it was resampled: neither files nor report
  bool ok = false;      // its files written
  std::string error;
  RegistrationResult result;
  Image moving;                     // registered, until resampled; then its grid and file type only
  std::optional<Image> registered;  // resampled, to be written
};

// Each image's batch_report.json entry and console line, in the images' order (WriteBehind
// runs `finish` in submission order, one at a time); the entry goes to the supervisor.
class ImageReporter {
 public:
  // `report_each`: a line per registered image on stdout (not with --quiet); failures always
  // get theirs, on stderr. `n`: the images of the whole batch.
  ImageReporter(size_t n, bool report_each) : n_(n), report_each_(report_each) {}

  void finish(const ImageJob& job) const {
    nlohmann::json entry = {{"path", job.path}, {"outputs", job.one.outputs.dir.string()}};
    entry["bids"] = bids_entities(job.path);
    entry["status"] = job.ok ? "ok" : "failed";
    entry["error"] = job.ok ? nlohmann::json() : nlohmann::json(job.error);
    entry["fault"] = nullptr;  // a crash or hang: the supervisor's entry has it
    entry["final_cost"] = job.ok ? nlohmann::json(job.result.final_cost) : nlohmann::json();
    entry["seconds"] = job.seconds;
    // Where the time went (null: not reached); NaN is JSON's null in nlohmann's dump.
    entry["seconds_reading"] = job.phases.reading;
    entry["seconds_registration"] = job.phases.registration;
    entry["seconds_writing"] = job.phases.writing;
    entry["seconds_resampling"] = job.seconds_resampling;
    if (!job.ok) {
      entry["outputs"] = nullptr;
      write_log_line(RP_LOG_ERROR, "[" + std::to_string(job.index + 1) + "/" + std::to_string(n_) + "] " +
                                       job.path + ": FAILED: " + job.error);
    } else if (report_each_) {
      std::printf("[%zu/%zu] %s: ok, cost %.6f, %.3f s (reading %.3f, registration %.3f, "
                  "writing %.3f) -> %s\n",
                  job.index + 1, n_, job.path.c_str(), job.result.final_cost, job.seconds,
                  job.phases.reading, job.phases.registration, job.phases.writing,
                  job.one.outputs.dir.c_str());
    }
    std::fflush(stdout);
    // One line, whatever bytes a path holds (invalid UTF-8 replaced, not thrown about).
    worker_report("done\t" + std::to_string(job.index) + "\t" +
                  entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

 private:
  size_t n_;
  bool report_each_;
};

// The worker's half of an image: its files, then the time it took.
void write_files(ImageJob& job, const Image& reference) {
  const auto start = Clock::now();
  try {
    write_output_files(job.one, reference, job.moving, job.result, job.registered, job.phases,
                       job.seconds);
    job.ok = true;
  } catch (const std::exception& e) {  // full disk, unwritable folder, ...
    job.error = e.what();
  }
  job.registered.reset();  // the memory goes back before the next job's
  job.seconds += seconds_since(start);
}

// The GPU this worker registers on (the cost's; else any component's), for the batch
// report's per-worker figures; null on the CPU.
nlohmann::json registering_device(const RegistrationComponents& components) {
  for (const char* role : {"cost", "optimizer", "resampler"})
    for (const UsedComponent& c : components.used)
      if (c.role == role && c.device) return device_json(c.device);
  return nullptr;
}

// Images registered at once when execution.registrations_per_worker is `auto` and the
// components compute on a GPU: one registration leaves the GPU idle between its evaluations
// (the optimizer's host work, each evaluation's launch and sync), which the others fill. On an
// H100 with FLIRT's CR search, 96 images: 3 gave 1105 / 1372 registrations per minute with /
// without registered images, 4 gave 1278 / 1431 (GPU 78-82 % busy), one 516 / 806; 24 images
// through regpipe serve, the worker's own rate 1328 / 1474 at 4, 1286 / 1429 at 6 and 1249 /
// 1396 at 8 (bench/results/batch_at_once_h100.md).
constexpr size_t kGpuRegistrationsAtOnce = 4;

size_t registrations_at_once(const Pipeline& p, const RegistrationComponents& first) {
  if (p.execution.registrations_per_worker > 0) return p.execution.registrations_per_worker;
  return registering_device(first).is_null() ? 1 : kGpuRegistrationsAtOnce;
}

// One registering thread's own: its components (abi.h: one call at a time per instance) and
// images (the reference, a copy, and the moving image it registers).
struct Lane {
  RegistrationComponents components;
  RegistrationImages images;
  double waiting_for_reads = 0.0, waiting_for_writes = 0.0;  // this thread idle
  std::exception_ptr stopped;  // what ended it early (Ctrl-C)
};

// Registers one image on `lane` (the plugin calls, on the lane's thread); its registered image
// is resampled (resample_one) and its files written behind.
std::shared_ptr<ImageJob> register_one(const Pipeline& p, MovingRead& read, Lane& lane,
                                       const PreparedReference& reference, HostServices& services) {
  const size_t i = read.index;
  auto job = std::make_shared<ImageJob>();
  job->index = i;
  job->path = p.inputs.moving[i].path.string();
  job->one = image_pipeline(p, i);
  const auto work_start = Clock::now();
  const ImageOnThisThread watched(i);  // a fault in this thread's plugin calls names image i
  worker_report("start\t" + std::to_string(i));
  try {
    if (read.error) std::rethrow_exception(read.error);
    job->phases.reading = read.seconds;
    lane.images.moving = std::move(read.images.moving);
    lane.images.moving_weight = std::move(read.images.moving_weight);
    const auto registration_start = Clock::now();
    job->result = register_images(job->one, lane.images, reference, lane.components, services);
    job->phases.registration = seconds_since(registration_start);
    job->result.seconds_loading = job->phases.reading;
    job->moving = std::move(lane.images.moving);
  } catch (const ComponentError& e) {
    if (e.status() == RP_CANCELLED) throw;  // Ctrl-C stops the batch, not only this image
    job->failed = true;
    job->error = e.what();
  } catch (const std::exception& e) {  // unreadable image, no overlap, ...
    job->failed = true;
    job->error = e.what();
  }
  job->seconds = read.seconds + seconds_since(work_start);
  return job;
}

// The registered image of a registered job through `resampler` (one call at a time: its own
// thread's), after which only the moving image's header is kept (what its files need).
void resample_one(ImageJob& job, const Image& reference, ResamplerInstance& resampler) {
  const auto start = Clock::now();
  const ImageOnThisThread watched(job.index);  // a fault in the resampler names this image
  try {
    job.registered = resample_registered(job.one, job.moving, reference, job.result.ref_to_mov, resampler);
    if (job.registered) job.phases.writing = job.seconds_resampling = seconds_since(start);
  } catch (const ComponentError& e) {
    job.failed = true;
    job.cancelled = e.status() == RP_CANCELLED;  // the batch stops: this image is not finished
    job.error = e.what();
  } catch (const std::exception& e) {
    job.failed = true;
    job.error = e.what();
  }
  job.moving = image_header(job.moving);
  job.seconds += seconds_since(start);
}

// A resampler of the batch's own for the registered images, resampled behind the registrations
// by one thread, where the registrations are on a GPU (its call is 0.024 s of an H100 lane's
// 0.15 s per image with 4 at once, bench/results/batch_at_once_h100.md) and files are written
// behind; nothing elsewhere (each lane resamples its own images: a CPU resampler's threads
// would compete with a CPU registration's).
std::optional<CreatedResampler> resampler_behind(const Pipeline& p, const BatchIo& io, const Lane& first,
                                                 const PluginHost& plugins, HostServices& services) {
  if (io.writers == 0 || (!p.outputs.registered_image && !p.outputs.qa_png) ||
      registering_device(first.components).is_null())
    return std::nullopt;
  return create_resampler(p.registration.resampler, plugins, services);
}

}  // namespace

void run_batch_worker(const Pipeline& p, const PluginHost& plugins, HostServices& services,
                      const std::string& batch_key) {
  report_moment("entered");
  if (const auto began = process_start_time()) report_moment("process_start", *began);
  check_worker_batch_key(p, batch_key);
  prepare_image_io();  // before any thread creates an ITK reader or writer
  prepare_transform_io();
  // The reference is read while the components start (on a GPU, in a fresh process, the CUDA
  // runtime and the device's context: 0.2-0.3 s on an H100); a bad parameter still fails
  // before any moving image is read.
  RegistrationImages reference_files;
  std::future<void> reference_read = std::async(std::launch::async, [&p, &reference_files] {
    load_reference(p.inputs, reference_files);
    report_moment("reference_read");
  });
  std::vector<Lane> lanes(1);
  lanes[0].components = create_registration_components(p, plugins, services);
  lanes.resize(registrations_at_once(p, lanes[0].components));
  for (size_t l = 1; l < lanes.size(); ++l) lanes[l].components = create_registration_components(p, plugins, services);
  report_moment("components");
  const BatchIo io = batch_io(p.outputs.parallel_io, lanes.size());

  // Declared in this order so that, leaving early (Ctrl-C), the reads stop first and the
  // results already registered are resampled and written while the lanes and `reporter`
  // still exist. Without a resampler of its own, `resampling` runs each job on its lane's
  // thread with the lane's resampler.
  const ImageReporter reporter(p.inputs.moving.size(), services.reports_summaries());
  WriteBehind writes(io.writers, io.write_queue);
  const std::optional<CreatedResampler> behind = resampler_behind(p, io, lanes[0], plugins, services);
  WriteBehind resampling(behind ? 1 : 0, lanes.size());
  double waiting_for_writes_inline = 0.0;  // lanes' waits in `resampling`'s jobs, one at a time under its lock
  ImageFeed feed(p.inputs.moving.size());
  ReadAhead<MovingRead> reads(io.readers, io.read_ahead, [&feed] { return feed.next(); }, [&p](size_t i) {
    MovingRead read;
    read.index = i;
    const auto read_start = Clock::now();
    try {
      load_moving(p.inputs, p.inputs.moving[i], read.images);
    } catch (const std::exception&) {  // unreadable image: reported in its turn
      read.error = std::current_exception();
    }
    read.seconds = seconds_since(read_start);
    return read;
  });

  // With the read-ahead running, the first moving images are read while the reference is
  // prepared once, with the first lane's resampler (whose device levels the others' costs
  // read: one CUDA context); each other lane copies its voxels on its own thread, while the
  // first registers (three copies of a 256x256x160 reference held the first image 0.07 s on
  // an H100 host).
  reference_read.get();
  lanes[0].images.reference = std::move(reference_files.reference);
  lanes[0].images.reference_weight = std::move(reference_files.reference_weight);
  const PreparedReference reference = prepare_reference(p, lanes[0].images, lanes[0].components);
  report_moment("reference_prepared");
  const Image& reference_image = lanes[0].images.reference;  // read-only from here

  std::mutex taking;  // the lanes take images in turn, in the read-ahead's order
  const auto take = [&]() -> std::optional<MovingRead> {
    std::lock_guard lock(taking);
    return reads.take();
  };
  // A job's files, after its resampling, in the order the registrations ended; a failed one
  // is only reported, in its turn.
  const auto write_behind = [&](const std::shared_ptr<ImageJob>& job) {
    if (job->cancelled) return;
    const auto finish = [job, &reporter] { reporter.finish(*job); };
    if (job->failed) {
      writes.submit(nullptr, finish);
      return;
    }
    const double waited = writes.submit([job, &reference_image] { write_files(*job, reference_image); }, finish);
    if (!behind) waiting_for_writes_inline += waited;  // on the lane's thread
  };
  const auto register_lane = [&](Lane& lane) {
    try {
      if (&lane != &lanes[0]) {
        lane.images.reference = reference_image;
        lane.images.reference_weight = lanes[0].images.reference_weight;
      }
      for (;;) {
        const auto wait_start = Clock::now();
        std::optional<MovingRead> next = take();
        if (io.readers > 0) lane.waiting_for_reads += seconds_since(wait_start);
        if (!next) break;
        std::shared_ptr<ImageJob> job = register_one(p, *next, lane, reference, services);
        ResamplerInstance& resampler = behind ? *behind->instance : *lane.components.resampler;
        std::function<void()> resample;
        if (!job->failed) resample = [job, &reference_image, &resampler] { resample_one(*job, reference_image, resampler); };
        const double waited = resampling.submit(std::move(resample), [job, &write_behind] { write_behind(job); });
        if (behind) lane.waiting_for_writes += waited;
      }
    } catch (...) {  // Ctrl-C: the other lanes see it too and end
      lane.stopped = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> others;
    for (size_t l = 1; l < lanes.size(); ++l) others.emplace_back([&, l] { register_lane(lanes[l]); });
    register_lane(lanes[0]);
  }
  for (Lane& lane : lanes)
    if (lane.stopped) std::rethrow_exception(lane.stopped);
  resampling.drain();
  writes.drain();

  double waiting_for_reads = 0.0, waiting_for_writes = waiting_for_writes_inline;  // registering threads idle
  for (const Lane& lane : lanes) {
    waiting_for_reads += lane.waiting_for_reads;
    waiting_for_writes += lane.waiting_for_writes;
  }
  worker_report("summary\t" + nlohmann::json{{"seconds_reference_preparation", reference.seconds},
                                              {"device", registering_device(lanes[0].components)},
                                              {"registrations_at_once", lanes.size()},
                                              {"io_threads", {{"readers", io.readers}, {"writers", io.writers}}},
                                              {"seconds_waiting_for_reading", waiting_for_reads},
                                              {"seconds_waiting_for_writing", waiting_for_writes}}
                                  .dump());
  worker_reports_ended();
}

}  // namespace regpipe
