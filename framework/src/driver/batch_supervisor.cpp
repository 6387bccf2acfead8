// The supervisor of a batch: it registers nothing itself (no plugin call, no computing on a
// device), but starts worker processes (batch_worker.cpp), one per placement of
// execution.devices / execution.workers (worker_placement.hpp), hands each the next image
// when it asks for one (batch_protocol.hpp), so that a slow image holds back only its own
// worker, and follows their reports. When a worker dies (a plugin's SIGSEGV, abort,
// std::terminate), is ended by its watchdog (a plugin call past
// registration.evaluation_timeout_s) or falls silent, the image it was registering is reported
// failed with the cause and the component, the images it had been handed go back to the others,
// and a new worker takes its place. A worker with several images in flight
// (execution.registrations_per_worker) names the one whose thread met the fault; the others in
// flight are handed out again (when it cannot name one, all in flight fail). A worker that cannot start (its device, its reference)
// leaves its place empty; the others register the rest. Images whose complete results exist
// are skipped first (outputs.resume, batch_resume.hpp). batch_report.json and the summary line
// are written here. A batch that runs in a process of `regpipe serve` takes its workers from
// the server's processes started ahead (serve/served_worker.hpp), which have paid their process
// and CUDA start already; each is still a process of its own.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/result_set.hpp>
#include <regpipe/host/serve.hpp>
#include <regpipe/host/termination.hpp>

#include "driver/elapsed.hpp"
#include "driver/batch_protocol.hpp"
#include "driver/batch_resume.hpp"
#include "driver/run_outputs.hpp"
#include "driver/worker_placement.hpp"
#include "process/process_start.hpp"
#include "process/worker_process.hpp"
#include "serve/served_worker.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <set>
#include <sys/wait.h>
#include <thread>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

// A worker reports a sign of life every two seconds; one silent this long is wedged beyond
// what its own watchdog can end (or never started), and is killed.
constexpr std::chrono::seconds kSilenceLimit{60};

// Workers are in process groups of their own: Ctrl-C reaches the supervisor, which passes each
// one on (a worker cancels on the first and ends on the second, HostServices), and so SIGTERM
// and SIGHUP, waiting a little for the workers to remove their temporaries. The signal hooks
// run on the signal thread (termination.hpp).
std::mutex g_workers_mutex;
std::set<pid_t> g_workers;
std::atomic<int> g_passed_on{0};  // the last signal passed on: a worker ended by it obeyed

void pass_on(int signal) {
  g_passed_on.store(signal);
  std::lock_guard lock(g_workers_mutex);
  for (const pid_t pid : g_workers) ::kill(pid, signal);
}
bool pass_interrupt_on() {
  pass_on(SIGINT);
  return true;
}
void pass_termination_on(int signal) {
  pass_on(signal);
  std::set<pid_t> pids;
  {
    std::lock_guard lock(g_workers_mutex);
    pids = g_workers;
  }
  for (int i = 0; i < 100; ++i) {  // up to 5 s; WNOWAIT leaves them to be reaped by their owner
    bool running = false;
    for (const pid_t pid : pids) {
      siginfo_t info{};
      const int waited = ::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT);
      // A served worker is the server's child, not ours: running while it can be signalled.
      running = running || (waited == 0 ? info.si_pid != pid : errno == ECHILD && ::kill(pid, 0) == 0);
    }
    if (!running) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

struct Fault {
  std::string kind, call, message;
  std::optional<size_t> image;  // the image whose thread it hit, when the worker knew
};

// What the process in one worker's place reported before it ended.
struct WorkerRun {
  std::map<size_t, Clock::time_point> in_flight;  // started and not done, with their start
  size_t done = 0;                // images it finished
  std::vector<size_t> handed;     // images handed to it and not done
  std::optional<Fault> fault;
  bool summarized = false;  // its work is over (its summary came): its process is let go
  WorkerExit exit;
};

// Why a worker ended abnormally, for the image it was registering.
std::string cause_of(const WorkerRun& run) {
  if (run.fault) return run.fault->message;
  std::string cause = "the worker process ";
  if (run.exit.silent) return cause.append("gave no sign of life for ").append(std::to_string(kSilenceLimit.count())).append(" s");
  if (run.exit.unknown) return cause.append("ended, and its server (regpipe serve) went away without telling how");
  cause.append("ended with ");
  if (run.exit.signal != 0) return cause.append(signal_name(run.exit.signal));
  return cause.append("exit status ").append(std::to_string(run.exit.exit_status));
}

// One worker's place (a device, a share of the cores) and the process now in it.
struct WorkerSlot {
  size_t id = 0;
  WorkerPlacement placement;
  std::unique_ptr<WorkerProcess> process;
  WorkerRun run;
  Clock::time_point heard;  // its last line
  std::optional<std::string> retired;  // why no process is started here again
  // For batch_report.json's per-worker figures.
  size_t processes = 0, registered = 0, failed = 0, registrations_at_once = 1;
  double seconds_registration = 0.0, seconds_reference_preparation = 0.0;
  std::optional<Clock::time_point> first_start, last_done;
  nlohmann::json device = nullptr;  // as its components described it
  size_t served_processes = 0;      // of `processes`, those taken from regpipe serve
  // Its first process's moments, for the report's timeline: its start here, its own (the
  // worker's "at" lines: its process start, components, reference), its images, its end.
  std::map<std::string, Clock::time_point> timeline;
};

// A worker's "at <event> <seconds>" line: the steady clock's seconds (the same in every process).
Clock::time_point moment_of(const std::string& seconds) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::stod(seconds))));
}

class Supervisor {
 public:
  Supervisor(const Pipeline& p, HostServices& services, std::vector<WorkerPlacement> placements, Clock::time_point start)
      : p_(p), services_(services), start_(start), n_(p.inputs.moving.size()),
        report_each_(services.reports_summaries()), entries_(n_) {
    // (A served process was started ahead: its age says nothing of this batch.)
    if (const auto began = process_start_time(); began && !server_of_this_command())
      seconds_before_batch_ = std::chrono::duration<double>(start - *began).count();
    for (size_t w = 0; w < placements.size(); ++w) {
      slots_.emplace_back();
      slots_.back().id = w;
      slots_.back().placement = std::move(placements[w]);
      if (placements.size() > 1) services.log(RP_LOG_INFO, describe_placement(w, slots_.back().placement));
    }
  }

  // Images whose complete results exist: their entries, from their report.json.
  void skip_complete() {
    if (!p_.outputs.resume) return;
    for (size_t i = 0; i < n_; ++i) {
      const Pipeline one = image_pipeline(p_, i);
      const auto result = complete_result(one);
      const auto* report = std::get_if<nlohmann::json>(&result);
      if (report == nullptr) continue;
      const nlohmann::json cost = report->value(nlohmann::json::json_pointer("/result/final_cost"), nlohmann::json());
      entries_[i] = entry(i, "skipped_complete", one.outputs.dir.string(), nullptr, nullptr, cost, 0.0);
      if (report_each_)
        std::printf("[%zu/%zu] %s: skipped, complete results in %s\n", i + 1, n_, path(i).c_str(),
                    one.outputs.dir.c_str());
    }
    std::fflush(stdout);
  }

  // Runs the workers until every image has an entry, or the batch stops (Ctrl-C; every
  // worker unable to start). Returns the exit status that stopped it, 0 when none did.
  int run(const std::vector<std::string>& run_again) {
    for (size_t i = 0; i < n_; ++i)
      if (entries_[i].is_null()) pool_.push_back(i);
    for (;;) {
      start_workers(run_again);
      std::vector<WorkerSlot*> running;
      for (WorkerSlot& s : slots_)
        if (s.process) running.push_back(&s);
      if (running.empty()) break;
      follow(running);
    }
    if (interrupted_ != 0) return interrupted_;
    // Workers that were between images when the signal came ended normally.
    if (g_passed_on.load() != 0 && !pool_.empty()) return 128 + g_passed_on.load();
    if (!pool_.empty()) return fail_the_rest();
    return 0;
  }

  void write_report(double total) const;

  size_t failures() const {
    size_t count = 0;
    for (const nlohmann::json& e : entries_) count += e["status"] == "failed" ? 1 : 0;
    return count;
  }

 private:
  std::string path(size_t i) const { return p_.inputs.moving[i].path.string(); }

  nlohmann::json entry(size_t i, const char* status, nlohmann::json outputs, nlohmann::json error,
                       nlohmann::json fault, nlohmann::json final_cost, double seconds) const {
    return {{"path", path(i)},          {"bids", bids_entities(path(i))}, {"outputs", outputs},  {"status", status},
            {"error", error},           {"fault", fault},            {"final_cost", final_cost},
            {"seconds", seconds},       {"seconds_reading", nullptr}, {"seconds_registration", nullptr},
            {"seconds_writing", nullptr}, {"seconds_resampling", nullptr}, {"worker", nullptr}};
  }

  // A process in every place that has none, while images wait and the batch goes on.
  void start_workers(const std::vector<std::string>& run_again) {
    for (WorkerSlot& s : slots_) {
      if (s.process || s.retired || pool_.empty() || interrupted_ != 0 || g_passed_on.load() != 0) continue;
      std::vector<std::string> args = run_again;
      args.insert(args.end(), {kBatchWorkerOption, worker_batch_key(p_)});
      if (s.processes == 0) s.timeline["started"] = Clock::now();
      s.process = start_process(s, args);
      s.run = WorkerRun{};
      s.heard = Clock::now();
      ++s.processes;
      std::lock_guard lock(g_workers_mutex);
      g_workers.insert(s.process->pid());
    }
  }

  // A process for place `s`: one of the server's (server_of_this_command) where its processes
  // suit the place (one worker, with all the cores, on the first device: what they started
  // with), else one started here.
  std::unique_ptr<WorkerProcess> start_process(WorkerSlot& s, const std::vector<std::string>& args) {
    const std::optional<fs::path> server = server_of_this_command();
    if (server && s.placement.cpus.empty() && s.placement.device.value_or(0) == 0) {
      std::string why;
      if (std::unique_ptr<WorkerProcess> served = start_served_worker(*server, args, &why)) {
        ++s.served_processes;
        return served;
      }
      services_.log(RP_LOG_INFO, "worker " + std::to_string(s.id) + ": " + why + "; its process starts here");
    }
    WorkerStart start;
    start.task_channel = true;
    start.cpus = s.placement.cpus;
    if (!s.placement.visible_device.empty()) start.environment = {{"CUDA_VISIBLE_DEVICES", s.placement.visible_device}};
    return std::make_unique<WorkerProcess>(args, start);
  }

  // Reads the running workers' reports until one of them ends, which is then dealt with.
  void follow(const std::vector<WorkerSlot*>& running) {
    std::vector<pollfd> fds;
    for (WorkerSlot* s : running) fds.push_back({s->process->report_fd(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    for (size_t k = 0; k < running.size(); ++k) {
      WorkerSlot& s = *running[k];
      if (fds[k].revents != 0) {
        s.process->read_available();
        s.heard = Clock::now();
      }
      while (const std::optional<std::string> line = s.process->buffered_line()) handle(s, *line);
      if (s.process->report_fd() >= 0 && Clock::now() - s.heard > kSilenceLimit) s.process->kill_silent();
      if (s.process->report_fd() < 0) ended(s);
    }
  }

  void handle(WorkerSlot& s, const std::string& line) {
    const std::vector<std::string> f = report_fields(line);
    WorkerRun& run = s.run;
    if (f[0] == "next") {
      if (pool_.empty() || g_passed_on.load() != 0) {
        s.process->send_task("end");
        return;
      }
      const size_t i = pool_.front();
      pool_.pop_front();
      run.handed.push_back(i);
      s.process->send_task(std::to_string(i));
      s.timeline.emplace("first_handed", Clock::now());
    } else if (f[0] == "start" && f.size() == 2) {
      const Clock::time_point now = Clock::now();
      run.in_flight[std::stoul(f[1])] = now;
      if (!s.first_start) s.first_start = now;
    } else if (f[0] == "done" && f.size() == 3) {
      const size_t i = std::stoul(f[1]);
      nlohmann::json e = nlohmann::json::parse(f[2]);
      e["worker"] = s.id;
      if (e["status"] == "ok") {
        ++s.registered;
        s.seconds_registration += e["seconds_registration"].get<double>();
      } else {
        ++s.failed;
      }
      entries_.at(i) = std::move(e);
      ++run.done;
      s.last_done = Clock::now();
      std::erase(run.handed, i);
      run.in_flight.erase(i);
    } else if (f[0] == "summary" && f.size() == 2) {
      if (s.processes == 1) s.timeline.emplace("summary", Clock::now());
      run.summarized = true;
      const nlohmann::json summary = nlohmann::json::parse(f[1]);
      s.seconds_reference_preparation += summary["seconds_reference_preparation"].get<double>();
      s.device = summary["device"];
      s.registrations_at_once = summary["registrations_at_once"].get<size_t>();
      waiting_for_reads_ += summary["seconds_waiting_for_reading"].get<double>();
      waiting_for_writes_ += summary["seconds_waiting_for_writing"].get<double>();
      io_threads_ = summary["io_threads"];
    } else if (f[0] == "at" && f.size() == 3 && s.processes == 1) {
      s.timeline.emplace(f[1], moment_of(f[2]));
    } else if (f[0] == "fault" && f.size() == 5) {
      run.fault = Fault{f[1], f[2], f[3], f[4].empty() ? std::nullopt : std::optional<size_t>(std::stoul(f[4]))};
    }
  }

  // A worker's process has ended: why, and what becomes of its images and its place.
  void ended(WorkerSlot& s) {
    WorkerRun& run = s.run;
    // After its summary, its process's teardown (CUDA's, 0.05-0.1 s on an H100) is not waited
    // for: every file of its images is written and reported.
    run.exit = run.summarized ? s.process->let_go() : s.process->wait();
    if (s.processes == 1) s.timeline["ended"] = Clock::now();
    {
      std::lock_guard lock(g_workers_mutex);
      g_workers.erase(s.process->pid());
    }
    // A worker that crashed or was killed could not remove what it was writing.
    if (run.exit.signal != 0 || run.exit.silent) remove_leftovers_of(s.process->pid(), p_.outputs.dir);
    s.process.reset();
    const bool ended_itself = !run.fault && run.exit.signal == 0 && !run.exit.silent;
    if (g_passed_on.load() != 0 && (run.exit.signal == g_passed_on.load() || (ended_itself && run.exit.exit_status != 0))) {
      // Ctrl-C (twice), SIGTERM: the batch ends as its workers did.
      if (interrupted_ == 0) interrupted_ = run.exit.signal != 0 ? 128 + run.exit.signal : run.exit.exit_status;
      return;
    }
    if (ended_itself && run.exit.exit_status != 0) {
      // Its own error, on stderr: an unreadable reference, a device it cannot use. Every
      // process in this place would meet it again.
      s.retired = "the worker process exited with status " + std::to_string(run.exit.exit_status) +
                  " (its error is above)";
      own_error_status_ = run.exit.exit_status;
    } else if (!ended_itself) {
      record_fault(s);
    } else if (run.done == 0 && !run.handed.empty()) {
      s.retired = "the worker process ended without registering the images it was handed";
    }
    // Images handed to it and not begun go to the next worker that asks.
    pool_.insert(pool_.begin(), run.handed.begin(), run.handed.end());
  }

  // The worker died or was ended: the image it was registering fails with the cause (of
  // several in flight, the one the fault names, the others going back to the pool with the
  // images it had not begun; all of them when it names none). Between images (a fault outside
  // any plugin, in the files of an image written behind), none is to blame: a new worker goes
  // on, since this one made progress. Before its first image (the reference, the components or
  // its device took it down), no process in this place is started again; the other workers
  // take its images.
  void record_fault(WorkerSlot& s) {
    WorkerRun& run = s.run;
    nlohmann::json fault = {{"kind", run.fault        ? run.fault->kind
                                     : run.exit.silent ? "silence"
                                                       : "crash"},
                            {"component", run.fault && !run.fault->call.empty() ? nlohmann::json(run.fault->call)
                                                                                 : nlohmann::json()},
                            {"signal", run.exit.signal != 0 && !run.exit.silent
                                           ? nlohmann::json(signal_name(run.exit.signal))
                                           : nlohmann::json()}};
    const std::string why = cause_of(run);
    if (run.in_flight.empty()) {
      if (run.done > 0) write_log_line(RP_LOG_WARNING, why + " between two images; a new worker goes on with the rest");
      else s.retired = why + " before its first image";
      return;
    }
    const bool named = run.fault && run.fault->image && run.in_flight.count(*run.fault->image) != 0;
    if (named && run.in_flight.size() > 1)
      write_log_line(RP_LOG_WARNING, std::to_string(run.in_flight.size() - 1) +
                                         " other image(s) in flight on that worker are registered again");
    for (const auto& [i, start] : run.in_flight) {
      if (named && i != *run.fault->image) continue;  // not to blame: handed out again
      std::erase(run.handed, i);
      fail_image(i, why, fault, seconds_since(start));
      entries_[i]["worker"] = s.id;
      ++s.failed;
    }
  }

  // Image i fails without a worker's entry for it: its entry, the folder a worker may have
  // made for it (if still empty) removed, and its line on stderr.
  void fail_image(size_t i, const std::string& why, const nlohmann::json& fault, double seconds) {
    entries_[i] = entry(i, "failed", nullptr, why, fault, nullptr, seconds);
    std::error_code ec;
    fs::remove(image_pipeline(p_, i).outputs.dir, ec);
    write_log_line(RP_LOG_ERROR, position(i) + path(i) + ": FAILED: " + why);
  }

  std::string position(size_t i) const {
    return "[" + std::to_string(i + 1) + "/" + std::to_string(n_) + "] ";
  }

  // Every place is empty for good with images left. When no worker could start and each said
  // why on stderr (a bad reference: one message, as a single run's), the batch ends with that
  // status; otherwise the images left fail with the last worker's cause.
  int fail_the_rest() {
    bool any_registered = false;
    for (const WorkerSlot& s : slots_) any_registered = any_registered || s.registered + s.failed > 0;
    if (!any_registered && own_error_status_ != 0) return own_error_status_;
    std::string why = "no worker could go on";
    for (const WorkerSlot& s : slots_)
      if (s.retired) why = *s.retired;
    for (const size_t i : pool_) fail_image(i, why, nullptr, 0.0);
    pool_.clear();
    return 0;
  }

  nlohmann::json worker_figures() const;

  const Pipeline& p_;
  HostServices& services_;
  Clock::time_point start_;
  size_t n_;
  bool report_each_;
  std::vector<nlohmann::json> entries_;  // null: not done yet
  std::deque<size_t> pool_;              // images not handed to any worker
  std::deque<WorkerSlot> slots_;
  int interrupted_ = 0;        // the exit status a passed-on signal ended the batch with
  int own_error_status_ = 0;   // the last status a worker exited with by its own error
  double waiting_for_reads_ = 0.0, waiting_for_writes_ = 0.0;
  nlohmann::json seconds_before_batch_ = nullptr;
  nlohmann::json io_threads_ = {{"readers", 0}, {"writers", 0}};
};

nlohmann::json Supervisor::worker_figures() const {
  nlohmann::json out = nlohmann::json::array();
  for (const WorkerSlot& s : slots_) {
    // From its first image's start to its last image's end: a worker's own throughput.
    const double busy = s.first_start && s.last_done
                            ? std::chrono::duration<double>(*s.last_done - *s.first_start).count()
                            : 0.0;
    // Its first process's moments, in seconds from the batch's start (negative: before it,
    // such as a served process's start).
    nlohmann::json timeline = nlohmann::json::object();
    for (const auto& [event, t] : s.timeline) timeline[event] = std::chrono::duration<double>(t - start_).count();
    if (s.first_start) timeline["first_image_start"] = std::chrono::duration<double>(*s.first_start - start_).count();
    if (s.last_done) timeline["last_image_done"] = std::chrono::duration<double>(*s.last_done - start_).count();
    out.push_back({{"worker", s.id},
                   {"device_index", s.placement.device ? nlohmann::json(*s.placement.device) : nlohmann::json()},
                   {"cuda_visible_devices",
                    s.placement.visible_device.empty() ? nlohmann::json() : nlohmann::json(s.placement.visible_device)},
                   {"device", s.device},
                   {"cores", s.placement.cpus},
                   {"registrations_at_once", s.registrations_at_once},
                   {"processes", s.processes},
                   {"served_processes", s.served_processes},
                   {"timeline", timeline},
                   {"registered", s.registered},
                   {"failed", s.failed},
                   {"seconds_busy", busy},
                   {"registrations_per_minute", busy > 0.0 ? 60.0 * double(s.registered) / busy : 0.0},
                   {"seconds_registration", s.seconds_registration},
                   {"seconds_reference_preparation", s.seconds_reference_preparation},
                   {"stopped", s.retired ? nlohmann::json(*s.retired) : nlohmann::json()}});
  }
  return out;
}

void Supervisor::write_report(double total) const {
  size_t failures = 0, skipped = 0, registered = 0, processes = 0;
  double reading = 0.0, registration = 0.0, writing = 0.0, resampling = 0.0, reference = 0.0;
  for (const nlohmann::json& e : entries_) {
    if (e["status"] == "failed") ++failures;
    if (e["status"] == "skipped_complete") ++skipped;
    if (e["status"] != "ok") continue;
    ++registered;
    reading += e["seconds_reading"].get<double>();
    registration += e["seconds_registration"].get<double>();
    writing += e["seconds_writing"].get<double>();
    if (e["seconds_resampling"].is_number()) resampling += e["seconds_resampling"].get<double>();
  }
  for (const WorkerSlot& s : slots_) {
    processes += s.processes;
    reference += s.seconds_reference_preparation;
  }
  const nlohmann::json summary = {
      {"images", n_},
      {"failures", failures},
      // Found complete (outputs.resume) and not registered again.
      {"skipped_complete", skipped},
      // Worker places (execution.devices / execution.workers), and the processes started in
      // them: one each, and one more after each crash or hang.
      {"workers", slots_.size()},
      {"worker_processes", processes},
      // Wall clock, from the start of the batch to its last file.
      {"seconds_total", total},
      // This process's own start before the batch's (exec, libraries, plugins, the pipeline).
      {"seconds_before_batch", seconds_before_batch_},
      {"registrations_per_minute", total > 0.0 ? 60.0 * double(registered) / total : 0.0},
      // Paid once per worker process; without batch mode every image would pay it again.
      {"seconds_reference_preparation", reference},
      // Summed over the images registered: where the batch's time went. With parallel_io
      // the phases overlap and their sum may exceed seconds_total.
      {"seconds_reading", reading},
      {"seconds_registration", registration},
      {"seconds_writing", writing},
      // The part of the writing spent resampling the registered image (on the registering
      // thread, through the resampler plugin); the rest is the files, on the writers.
      {"seconds_resampling", resampling},
      {"parallel_io", p_.outputs.parallel_io},
      {"io_threads", io_threads_},
      // The registering threads idle, waiting for a moving image to be read or for room in
      // the write queue: which side holds the batch back.
      {"seconds_waiting_for_reading", waiting_for_reads_},
      {"seconds_waiting_for_writing", waiting_for_writes_}};
  const nlohmann::json report = {{"regpipe_version", REGPIPE_VERSION},
                                 {"pipeline", p_.source.string()},
                                 {"reference", p_.inputs.reference.path.string()},
                                 {"summary", summary},
                                 {"workers", worker_figures()},
                                 {"images", entries_}};
  write_text_atomically(p_.outputs.dir / "batch_report.json", report.dump(2) + "\n");
  if (report_each_)
    std::printf("batch: %zu images, %zu failed, %zu skipped as complete, total %.3f s (wall clock; "
                "reading %.3f, registration %.3f, writing %.3f summed%s), %.1f registrations per "
                "minute on %zu worker(s), reference prepared in %.3f s; report in %s\n",
                n_, failures, skipped, total, reading, registration, writing,
                p_.outputs.parallel_io ? ", overlapped" : "",
                summary["registrations_per_minute"].get<double>(), slots_.size(), reference,
                (p_.outputs.dir / "batch_report.json").c_str());
}

}  // namespace

BatchOutcome run_batch(const Pipeline& p, HostServices& services, const std::vector<std::string>& run_again) {
  const auto start = Clock::now();
  std::vector<WorkerPlacement> placements = place_workers(p.execution);  // a missing device: before any file
  OutputFolder folder(p.outputs.dir);
  Supervisor supervisor(p, services, std::move(placements), start);
  supervisor.skip_complete();
  on_interrupt(pass_interrupt_on);
  on_termination(pass_termination_on);
  if (const int stopped = supervisor.run(run_again); stopped != 0) return {0, stopped};
  supervisor.write_report(seconds_since(start));
  folder.keep();
  return {supervisor.failures(), 0};
}

}  // namespace regpipe
