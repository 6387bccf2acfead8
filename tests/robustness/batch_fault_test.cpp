// A plugin that crashes, aborts, hangs or throws on one image of a batch costs that image
// only: the supervisor reports it with the component, starts a new worker for the rest, and
// the batch exits non-zero (issue 20, item 3).
#include "fault_batch.hpp"

#include <csignal>

namespace fs = std::filesystem;
using regpipe::test::FaultBatch;
using regpipe::test::quoted;

namespace {

struct Fault {
  const char* cost;     // the fault plugin's component
  const char* kind;     // batch_report.json: fault.kind
  const char* signal;   // fault.signal (null: none)
  const char* message;  // in the error and on stderr
  int workers;          // worker processes the batch needs
};

void PrintTo(const Fault& fault, std::ostream* os) { *os << fault.cost; }

class BatchFault : public FaultBatch, public ::testing::WithParamInterface<Fault> {};

}  // namespace

TEST_P(BatchFault, FinishesTheOtherNineAndReportsTheOne) {
  const Fault& fault = GetParam();
  const std::string extra = std::string(fault.kind) == "timeout" ? "  evaluation_timeout_s: 1\n" : "";
  int status = -1;
  const std::string out = run("run " + quoted(pipeline(fault_cost(fault.cost), extra)), &status);
  EXPECT_EQ(status, 2) << out;
  const std::string component = std::string("cost '") + fault.cost + "' evaluate";
  // On stderr: the image, the component and what happened.
  const std::string failed_line = "[5/10] " + scan(kMarked).string() + ": FAILED: ";
  ASSERT_NE(out.find(failed_line), std::string::npos) << out;
  const std::string rest = out.substr(out.find(failed_line));
  EXPECT_NE(rest.find(fault.message), std::string::npos) << out;
  EXPECT_NE(rest.find(fault.cost), std::string::npos) << out;

  const nlohmann::json report = batch_report();
  EXPECT_EQ(report["summary"]["images"], 10);
  EXPECT_EQ(report["summary"]["failures"], 1);
  EXPECT_EQ(report["summary"]["worker_processes"], fault.workers);
  EXPECT_EQ(report["summary"]["workers"], 1);
  ASSERT_EQ(report["images"].size(), 10u);
  for (int i = 0; i < kImages; ++i) {
    const nlohmann::json& image = report["images"][i];
    EXPECT_EQ(image["path"], scan(i).string());
    if (i != kMarked) {
      EXPECT_EQ(image["status"], "ok") << i << ": " << image.dump();
      EXPECT_TRUE(fs::is_regular_file(result(i) / "transform.mat")) << i;
      continue;
    }
    EXPECT_EQ(image["status"], "failed");
    EXPECT_NE(image["error"].get<std::string>().find(fault.message), std::string::npos) << image.dump();
    EXPECT_TRUE(image["outputs"].is_null());
    if (fault.workers == 1) {  // contained in the worker: no fault record
      EXPECT_TRUE(image["fault"].is_null()) << image.dump();
      continue;
    }
    EXPECT_FALSE(fs::exists(result(i))) << "the folder the dead worker made is left behind";
    EXPECT_EQ(image["fault"]["kind"], fault.kind) << image.dump();
    EXPECT_EQ(image["fault"]["component"], component) << image.dump();
    if (fault.signal != nullptr) EXPECT_EQ(image["fault"]["signal"], fault.signal) << image.dump();
    else EXPECT_TRUE(image["fault"]["signal"].is_null()) << image.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Faults, BatchFault,
    ::testing::Values(Fault{"test.fault.segv", "crash", "SIGSEGV", "SIGSEGV in cost 'test.fault.segv' evaluate", 2},
                      Fault{"test.fault.abort", "crash", "SIGABRT", "SIGABRT in cost 'test.fault.abort' evaluate", 2},
                      Fault{"test.fault.hang", "timeout", nullptr,
                            "cost 'test.fault.hang' evaluate did not return within 1 s "
                            "(registration.evaluation_timeout_s)",
                            2},
                      // An exception across the ABI is caught at the call: the worker goes on.
                      Fault{"test.fault.throw", "", nullptr, "a C++ exception escaped the plugin", 1}),
    [](const auto& info) { return std::string(info.param.cost).substr(11); });

// A single run whose cost hangs (and ignores should_cancel) ends at the timeout, naming it.
TEST_F(FaultBatch, ASingleRunWithAHangingCostEndsAtTheTimeout) {
  int status = -1;
  const std::string out = run("run " + quoted(pipeline(fault_cost("test.fault.hang"), "  evaluation_timeout_s: 1\n")) +
                                  " --set inputs.moving=" + quoted(scan(kMarked)),
                              &status);
  EXPECT_EQ(status, 3) << out;
  EXPECT_NE(out.find("regpipe: error: cost 'test.fault.hang' evaluate did not return within 1 s "
                     "(registration.evaluation_timeout_s); ending the process"),
            std::string::npos)
      << out;
}

// A single run whose cost segfaults names the plugin call on its way down.
TEST_F(FaultBatch, ASingleRunWithACrashingCostNamesIt) {
  int status = -1;
  const std::string out = run("run " + quoted(pipeline(fault_cost("test.fault.segv"))) + " --set inputs.moving=" +
                                  quoted(scan(kMarked)),
                              &status);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("regpipe: fatal: SIGSEGV in cost 'test.fault.segv' evaluate (a fault in that plugin)"),
            std::string::npos)
      << out;
}

TEST_F(FaultBatch, AnEvaluationTimeoutOutsideItsRangeIsRefused) {
  int status = -1;
  const std::string out =
      run("validate " + quoted(pipeline(fault_cost("test.fault.segv"), "  evaluation_timeout_s: 0\n")), &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("registration.evaluation_timeout_s=0 is outside (0, 1e6] seconds"), std::string::npos) << out;
}

// A plugin that ignores should_cancel: the first Ctrl-C asks, the second ends the run at once.
TEST_F(FaultBatch, ASecondCtrlCEndsARunWhosePluginIgnoresTheFirst) {
  const fs::path log = dir_ / "run.log";
  const pid_t pid = start({"run", pipeline(fault_cost("test.fault.hang")).string(), "--set",
                           "inputs.moving=" + scan(kMarked).string()},
                          log);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_until_hanging(log)) << text_of(log);
  ::kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(pid, SIGINT);
  EXPECT_EQ(wait_for(pid), 130) << text_of(log);
  EXPECT_NE(text_of(log).find("regpipe: interrupted again; ending now"), std::string::npos) << text_of(log);
}

// The same in a batch: the supervisor passes each Ctrl-C on to its worker and ends with it.
TEST_F(FaultBatch, ASecondCtrlCEndsABatchWhosePluginIgnoresTheFirst) {
  const fs::path log = dir_ / "batch.log";
  const pid_t pid = start({"run", pipeline(fault_cost("test.fault.hang")).string()}, log);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(wait_until_hanging(log)) << text_of(log);  // on scan_04
  ::kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(pid, SIGINT);
  EXPECT_EQ(wait_for(pid), 130) << text_of(log);
  EXPECT_NE(text_of(log).find("regpipe: interrupted again; ending now"), std::string::npos) << text_of(log);
}

// A worker expands inputs.moving again; a task made for another list (files added to the glob
// since the batch started) is refused rather than registering the wrong images.
TEST_F(FaultBatch, AWorkerRefusesATaskForAnotherImageList) {
  int status = -1;
  const std::string out =
      run("run " + quoted(pipeline(fault_cost("test.fault.segv"))) + " --batch-worker 9:0123456789abcdef", &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("the batch's image list (10 images now) is not the one the batch started with"), std::string::npos)
      << out;
}

// With two workers, the other one goes on while the crashed one's place gets a new process:
// still one image lost, and every other image registered exactly once. Each healthy image takes
// 500 ms, so images still wait when scan_04 crashes: the healthy worker has not been told to
// end (with the pool empty it would be, and the images its crashed peer had asked for ahead
// would then refill both places, a fourth process).
TEST_F(FaultBatch, WithTwoWorkersACrashCostsOneImageAndTheOthersAreRegisteredOnce) {
  int status = -1;
  const std::string cost = "{plugin: test.fault.segv, params: {only_below_extent_mm: 145, healthy_first_evaluation_ms: 500}}";
  const std::string out = run("run " + quoted(pipeline(cost)) + " --workers 2", &status);
  EXPECT_EQ(status, 2) << out;
  const nlohmann::json report = batch_report();
  EXPECT_EQ(report["summary"]["failures"], 1);
  EXPECT_EQ(report["summary"]["workers"], 2);
  EXPECT_EQ(report["summary"]["worker_processes"], 3);
  size_t registered = 0;
  for (const nlohmann::json& w : report["workers"]) registered += w["registered"].get<size_t>();
  EXPECT_EQ(registered, size_t(kImages - 1));
  for (int i = 0; i < kImages; ++i) {
    const nlohmann::json& image = report["images"][i];
    EXPECT_EQ(image["status"], i == kMarked ? "failed" : "ok") << i << ": " << image.dump();
    if (i == kMarked) EXPECT_EQ(image["fault"]["signal"], "SIGSEGV") << image.dump();
  }
}

// Three images registered at once in one worker (execution.registrations_per_worker): the
// crash names scan_04, which alone fails; the images in flight beside it (their first
// evaluation waits 2 s, so they are) are registered again by the next worker, once each.
TEST_F(FaultBatch, WithSeveralImagesInFlightACrashCostsOnlyItsImage) {
  int status = -1;
  const std::string out = run("run " +
                                  quoted(pipeline("{plugin: test.fault.segv, params: {only_below_extent_mm: 145, "
                                                  "healthy_first_evaluation_ms: 2000}}",
                                                  "")) +
                                  " --set execution.registrations_per_worker=3",
                              &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("other image(s) in flight on that worker are registered again"), std::string::npos) << out;
  const nlohmann::json report = batch_report();
  EXPECT_EQ(report["summary"]["failures"], 1);
  EXPECT_EQ(report["summary"]["worker_processes"], 2);
  ASSERT_EQ(report["workers"].size(), 1u);
  EXPECT_EQ(report["workers"][0]["registrations_at_once"], 3);
  EXPECT_EQ(report["workers"][0]["registered"], kImages - 1);
  for (int i = 0; i < kImages; ++i) {
    const nlohmann::json& image = report["images"][i];
    EXPECT_EQ(image["status"], i == kMarked ? "failed" : "ok") << i << ": " << image.dump();
    if (i == kMarked) EXPECT_EQ(image["fault"]["component"], "cost 'test.fault.segv' evaluate") << image.dump();
  }
}
