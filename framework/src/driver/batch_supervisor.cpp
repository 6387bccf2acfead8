// The supervisor of a batch: it registers nothing itself (no plugin call, no CUDA), but starts
// a worker process (batch_worker.cpp) for the images still to do and follows its reports
// (batch_protocol.hpp). When the worker dies (a plugin's SIGSEGV, abort, std::terminate), is
// ended by its watchdog (a plugin call past registration.evaluation_timeout_s) or falls silent,
// the image it was registering is reported failed with the cause and the component, and a new
// worker goes on with the rest. Images whose complete results exist are skipped first
// (outputs.resume, batch_resume.hpp). batch_report.json and the summary line are written here.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/result_set.hpp>
#include <regpipe/host/termination.hpp>

#include "driver/elapsed.hpp"
#include "driver/batch_protocol.hpp"
#include "driver/batch_resume.hpp"
#include "driver/run_outputs.hpp"
#include "process/worker_process.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <sys/wait.h>
#include <thread>

namespace fs = std::filesystem;

namespace regpipe {
namespace {


// A worker reports a sign of life every two seconds; one silent this long is wedged beyond
// what its own watchdog can end (or never started), and is killed.
constexpr std::chrono::seconds kSilenceLimit{60};

// The worker is in a process group of its own: Ctrl-C reaches the supervisor, which passes
// each one on (the worker cancels on the first and ends on the second, HostServices), and so
// SIGTERM and SIGHUP, waiting a little for the worker to remove its temporaries.
std::atomic<pid_t> g_worker{0};
std::atomic<int> g_passed_on{0};  // the last signal passed on: a worker ended by it obeyed
bool pass_interrupt_on() {
  g_passed_on.store(SIGINT);
  if (const pid_t pid = g_worker.load(); pid > 0) ::kill(pid, SIGINT);
  return true;
}
void pass_termination_on(int signal) {
  g_passed_on.store(signal);
  const pid_t pid = g_worker.load();
  if (pid <= 0) return;
  ::kill(pid, signal);
  for (int i = 0; i < 100; ++i) {  // up to 5 s; WNOWAIT leaves it to be reaped by run_worker
    siginfo_t info{};
    if (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

struct Fault {
  std::string kind, call, message;
};

// What one worker reported before it ended.
struct WorkerRun {
  std::optional<size_t> current;  // started and not done
  Clock::time_point current_start;
  size_t done = 0;                // images it finished
  std::optional<Fault> fault;
  WorkerExit exit;
};

// Why a worker ended abnormally, for the image it was registering.
std::string cause_of(const WorkerRun& run) {
  if (run.fault) return run.fault->message;
  std::string cause = "the worker process ";
  if (run.exit.silent) return cause.append("gave no sign of life for ").append(std::to_string(kSilenceLimit.count())).append(" s");
  cause.append("ended with ");
  if (run.exit.signal != 0) return cause.append(signal_name(run.exit.signal));
  return cause.append("exit status ").append(std::to_string(run.exit.exit_status));
}

class Supervisor {
 public:
  Supervisor(const Pipeline& p, HostServices& services)
      : p_(p), n_(p.inputs.moving.size()), report_each_(services.reports_summaries()), entries_(n_) {}

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

  // The images without an entry yet.
  std::vector<size_t> todo() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < n_; ++i)
      if (entries_[i].is_null()) out.push_back(i);
    return out;
  }

  WorkerRun run_worker(const std::vector<std::string>& run_again, const std::vector<size_t>& todo) {
    std::vector<std::string> args = run_again;
    args.insert(args.end(), {kBatchWorkerOption, encode_worker_task(p_, todo)});
    WorkerProcess worker(args, false);
    ++workers_;
    g_worker.store(worker.pid());
    WorkerRun run;
    while (const std::optional<std::string> line = worker.next_line(kSilenceLimit)) {
      const std::vector<std::string> f = report_fields(*line);
      if (f[0] == "start" && f.size() == 2) {
        run.current = std::stoul(f[1]);
        run.current_start = Clock::now();
      } else if (f[0] == "done" && f.size() == 3) {
        const size_t i = std::stoul(f[1]);
        entries_.at(i) = nlohmann::json::parse(f[2]);
        ++run.done;
        if (run.current == i) run.current.reset();
      } else if (f[0] == "summary" && f.size() == 2) {
        add_worker_summary(nlohmann::json::parse(f[1]));
      } else if (f[0] == "fault" && f.size() == 4) {
        run.fault = Fault{f[1], f[2], f[3]};
      }
    }
    run.exit = worker.wait();
    g_worker.store(0);
    // A worker that crashed or was killed could not remove what it was writing.
    if (run.exit.signal != 0 || run.exit.silent) remove_leftovers_of(worker.pid(), p_.outputs.dir);
    return run;
  }

  // The worker died or was ended: the image it was registering fails with the cause. Between
  // images (a fault outside any plugin, in the files of an image written behind), none is to
  // blame: a new worker goes on, since this one made progress. Before its first image (the
  // reference or the components took it down), every image left fails, as every worker would.
  void record_fault(const WorkerRun& run) {
    nlohmann::json fault = {{"kind", run.fault        ? run.fault->kind
                                     : run.exit.silent ? "silence"
                                                       : "crash"},
                            {"component", run.fault && !run.fault->call.empty() ? nlohmann::json(run.fault->call)
                                                                                 : nlohmann::json()},
                            {"signal", run.exit.signal != 0 && !run.exit.silent
                                           ? nlohmann::json(signal_name(run.exit.signal))
                                           : nlohmann::json()}};
    std::string why = cause_of(run);
    if (!run.current && run.done > 0) {
      write_log_line(RP_LOG_WARNING, why + " between two images; a new worker goes on with the rest");
      return;
    }
    std::vector<size_t> failed = run.current ? std::vector<size_t>{*run.current} : todo();
    const double seconds = run.current ? seconds_since(run.current_start) : 0.0;
    if (!run.current) why += " before its first image";
    for (size_t i : failed) {
      entries_[i] = entry(i, "failed", nullptr, why, fault, nullptr, seconds);
      std::error_code ec;
      fs::remove(image_pipeline(p_, i).outputs.dir, ec);  // the folder the worker made, if still empty
      char position[48];
      std::snprintf(position, sizeof(position), "[%zu/%zu] ", i + 1, n_);
      write_log_line(RP_LOG_ERROR, position + path(i) + ": FAILED: " + why);
    }
  }

  void write_report(double total) const {
    size_t failures = 0, skipped = 0, registered = 0;
    double reading = 0.0, registration = 0.0, writing = 0.0, resampling = 0.0;
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
    const nlohmann::json summary = {
        {"images", n_},
        {"failures", failures},
        // Found complete (outputs.resume) and not registered again.
        {"skipped_complete", skipped},
        // Worker processes started: one, and one more after each crash or hang.
        {"workers", workers_},
        // Wall clock, from the start of the batch to its last file.
        {"seconds_total", total},
        {"registrations_per_minute", total > 0.0 ? 60.0 * double(registered) / total : 0.0},
        // Paid once per worker; without batch mode every image would pay it again.
        {"seconds_reference_preparation", reference_seconds_},
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
        // The registering thread idle, waiting for a moving image to be read or for room in
        // the write queue: which side holds the batch back.
        {"seconds_waiting_for_reading", waiting_for_reads_},
        {"seconds_waiting_for_writing", waiting_for_writes_}};
    const nlohmann::json report = {{"regpipe_version", REGPIPE_VERSION},
                                   {"pipeline", p_.source.string()},
                                   {"reference", p_.inputs.reference.path.string()},
                                   {"summary", summary},
                                   {"images", entries_}};
    write_text_atomically(p_.outputs.dir / "batch_report.json", report.dump(2) + "\n");
    if (report_each_)
      std::printf("batch: %zu images, %zu failed, %zu skipped as complete, total %.3f s (wall clock; "
                  "reading %.3f, registration %.3f, writing %.3f summed%s), %.1f registrations per "
                  "minute, reference prepared in %.3f s; report in %s\n",
                  n_, failures, skipped, total, reading, registration, writing,
                  p_.outputs.parallel_io ? ", overlapped" : "",
                  summary["registrations_per_minute"].get<double>(), reference_seconds_,
                  (p_.outputs.dir / "batch_report.json").c_str());
  }

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
            {"seconds_writing", nullptr}, {"seconds_resampling", nullptr}};
  }

  void add_worker_summary(const nlohmann::json& s) {
    reference_seconds_ += s["seconds_reference_preparation"].get<double>();
    waiting_for_reads_ += s["seconds_waiting_for_reading"].get<double>();
    waiting_for_writes_ += s["seconds_waiting_for_writing"].get<double>();
    io_threads_ = s["io_threads"];
  }

  const Pipeline& p_;
  size_t n_;
  bool report_each_;
  std::vector<nlohmann::json> entries_;  // null: not done yet
  size_t workers_ = 0;
  double reference_seconds_ = 0.0, waiting_for_reads_ = 0.0, waiting_for_writes_ = 0.0;
  nlohmann::json io_threads_ = {{"readers", 0}, {"writers", 0}};
};

}  // namespace

BatchOutcome run_batch(const Pipeline& p, HostServices& services, const std::vector<std::string>& run_again) {
  const auto start = Clock::now();
  OutputFolder folder(p.outputs.dir);
  Supervisor supervisor(p, services);
  supervisor.skip_complete();
  on_interrupt(pass_interrupt_on);
  on_termination(pass_termination_on);

  for (std::vector<size_t> todo = supervisor.todo(); !todo.empty(); todo = supervisor.todo()) {
    const WorkerRun run = supervisor.run_worker(run_again, todo);
    if (run.exit.signal != 0 && run.exit.signal == g_passed_on.load())
      return {0, 128 + run.exit.signal};  // Ctrl-C twice: the batch ends as the worker did
    const bool ended_itself = !run.fault && run.exit.signal == 0 && !run.exit.silent;
    if (ended_itself && run.exit.exit_status != 0)
      return {0, run.exit.exit_status};  // its error is on stderr: a bad reference, Ctrl-C, ...
    if (ended_itself && supervisor.todo() == todo)
      throw std::runtime_error("batch worker ended without registering any image");
    if (!ended_itself) supervisor.record_fault(run);
  }
  supervisor.write_report(seconds_since(start));
  folder.keep();
  return {supervisor.failures(), 0};
}

}  // namespace regpipe
