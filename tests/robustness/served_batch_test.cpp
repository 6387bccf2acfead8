// A batch run through `regpipe serve` takes its worker from the server's processes started
// ahead (serve/served_worker.hpp): the same files as a batch run here, a crash in a served
// worker still costs only its image (the server tells the signal that ended a process), a server stopped mid-batch lets the batch finish, and a
// server killed mid-batch leaves a client that says so and no process behind.
#include "fault_batch.hpp"

#include <csignal>

namespace fs = std::filesystem;
using regpipe::test::BackgroundCommand;
using regpipe::test::FaultBatch;
using regpipe::test::quoted;

namespace {

class ServedBatch : public FaultBatch {
 protected:
  void SetUp() override {
    FaultBatch::SetUp();
    if (HasFatalFailure()) return;
    server_ = std::make_unique<BackgroundCommand>(cli() + " serve --ready 2 --socket " + quoted(socket()) +
                                                      " --plugin-path " + quoted(regpipe::test::fault_plugin_dir()),
                                                  dir_ / "serve.log");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!fs::exists(socket()) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_TRUE(fs::exists(socket())) << text_of(dir_ / "serve.log");
  }
  fs::path socket() const { return dir_ / "serve.sock"; }
  // `run` through the server: regpipe with the fault plugin on its path.
  std::string run_served(const std::string& args, int* status) const {
    std::string out;
    *status = regpipe::test::run_command("env REGPIPE_SERVER=" + quoted(socket()) + " " + cli() + " " + args +
                                             " --plugin-path " + quoted(regpipe::test::fault_plugin_dir()),
                                         &out);
    return out;
  }
  // Processes of this test's server (its socket on their command line) or batch (its
  // pipeline); the brackets keep the shell running pgrep from matching.
  int processes_here() const {
    std::string out;
    const std::string here = dir_.path().string();
    regpipe::test::run_command("pgrep -fc -- '" + here + "/[s]erve.sock|" + here + "/[p]ipeline.yaml'", &out);
    return std::atoi(out.c_str());
  }
  // Whether they are all gone within 10 s (a worker let go after its summary may still be
  // ending when its batch has ended).
  bool none_left() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (processes_here() != 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return processes_here() == 0;
  }

  std::unique_ptr<BackgroundCommand> server_;
};

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(ServedBatch, ItsWorkerIsTheServersAndItsFilesAreThoseOfABatchHere) {
  const std::string cost = "{plugin: cpu.cr, params: {bins: 32}}";
  int status = -1;
  std::string out = run("run " + quoted(pipeline(cost)) + " --set outputs.registered_image=true --set outputs.dir=" + quoted(dir_ / "here") + " -q",
                        &status);
  ASSERT_EQ(status, 0) << out;
  out = run_served("run " + quoted(pipeline(cost)) + " --set outputs.registered_image=true -q", &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("warning"), std::string::npos) << out;
  const nlohmann::json report = batch_report();
  EXPECT_EQ(report["summary"]["failures"], 0);
  EXPECT_EQ(report["summary"]["worker_processes"], 1);
  EXPECT_EQ(report["workers"][0]["served_processes"], 1);
  // Its timeline: the served process started before the batch, then its components and the
  // reference, then its first image.
  const nlohmann::json& timeline = report["workers"][0]["timeline"];
  EXPECT_LT(timeline["process_start"].get<double>(), 0.0) << timeline.dump();
  EXPECT_LE(timeline["reference_prepared"].get<double>(), timeline["first_image_start"].get<double>()) << timeline.dump();
  EXPECT_LE(timeline["first_image_start"].get<double>(), timeline["last_image_done"].get<double>()) << timeline.dump();
  for (int i = 0; i < kImages; ++i)
    for (const char* file : {"transform.mat", "transform_world.txt", "registered.nii.gz"}) {
      const fs::path here = dir_ / "here" / result(i).filename() / file;
      ASSERT_TRUE(fs::exists(here)) << here;
      EXPECT_EQ(file_text(here), file_text(result(i) / file)) << i << " " << file;
    }
}

TEST_F(ServedBatch, ACrashInAServedWorkerCostsOnlyItsImage) {
  int status = -1;
  const std::string out = run_served("run " + quoted(pipeline(fault_cost("test.fault.segv"))), &status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("[5/10] " + scan(kMarked).string() + ": FAILED: SIGSEGV in cost 'test.fault.segv' evaluate"),
            std::string::npos)
      << out;
  const nlohmann::json report = batch_report();
  EXPECT_EQ(report["summary"]["failures"], 1);
  EXPECT_EQ(report["summary"]["worker_processes"], 2);
  EXPECT_EQ(report["workers"][0]["served_processes"], 2);  // the one in its place too
  for (int i = 0; i < kImages; ++i) {
    const nlohmann::json& image = report["images"][i];
    EXPECT_EQ(image["status"], i == kMarked ? "failed" : "ok") << i << ": " << image.dump();
    if (i != kMarked) continue;
    // The server told the signal that ended its process.
    EXPECT_EQ(image["fault"]["signal"], "SIGSEGV") << image.dump();
    EXPECT_EQ(image["fault"]["component"], "cost 'test.fault.segv' evaluate") << image.dump();
    EXPECT_FALSE(fs::exists(result(i)));
  }
}

// A single run whose process dies there: the server tells the client the signal, which exits
// as a shell reports a process ended by it.
TEST_F(ServedBatch, ARunThatCrashesThereEndsHereWithItsSignal) {
  int status = -1;
  const std::string out =
      run_served("run " + quoted(pipeline(fault_cost("test.fault.segv"))) + " --set inputs.moving=" + quoted(scan(kMarked)),
                 &status);
  EXPECT_EQ(status, 128 + SIGSEGV) << out;
  EXPECT_NE(out.find("regpipe: fatal: SIGSEGV in cost 'test.fault.segv' evaluate"), std::string::npos) << out;
  EXPECT_NE(out.find("which ran this command, ended with SIGSEGV"), std::string::npos) << out;
}

// Ctrl-C stops the server: it takes no more commands, so the worker that replaces the crashed
// one starts in the batch's own process, and the batch ends as it would have.
TEST_F(ServedBatch, AServerStoppedMidBatchLetsItFinish) {
  const std::string cost = "{plugin: test.fault.segv, params: {only_below_extent_mm: 145, healthy_first_evaluation_ms: 300}}";
  BackgroundCommand client("env REGPIPE_SERVER=" + quoted(socket()) + " " + cli() + " run " + quoted(pipeline(cost)) +
                               " --plugin-path " + quoted(regpipe::test::fault_plugin_dir()),
                           dir_ / "client.log");
  ASSERT_TRUE(wait_until_logged(dir_ / "client.log", "[2/10]")) << text_of(dir_ / "client.log");
  server_->signal(SIGINT);
  EXPECT_EQ(client.wait(), 2) << text_of(dir_ / "client.log");
  EXPECT_EQ(server_->wait(), 0) << text_of(dir_ / "serve.log");
  const nlohmann::json report = batch_report();
  EXPECT_EQ(report["summary"]["failures"], 1);
  EXPECT_EQ(report["summary"]["worker_processes"], 2);
  EXPECT_EQ(report["workers"][0]["served_processes"], 1);
  EXPECT_EQ(report["images"][kMarked]["fault"]["signal"], "SIGSEGV") << report["images"][kMarked].dump();
  EXPECT_TRUE(none_left());
}

// A server killed outright takes its processes with it (the batch's supervisor and its worker
// among them): the client says the server went away, and nothing is left running.
TEST_F(ServedBatch, AServerKilledMidBatchLeavesAClientThatSaysSo) {
  const std::string cost = fault_cost("test.fault.hang");
  BackgroundCommand client("env REGPIPE_SERVER=" + quoted(socket()) + " " + cli() + " run " + quoted(pipeline(cost)) +
                               " --plugin-path " + quoted(regpipe::test::fault_plugin_dir()),
                           dir_ / "client.log");
  ASSERT_TRUE(wait_until_hanging(dir_ / "client.log")) << text_of(dir_ / "client.log");
  server_->signal(SIGKILL);
  server_->wait();
  EXPECT_EQ(client.wait(), 1) << text_of(dir_ / "client.log");
  EXPECT_NE(text_of(dir_ / "client.log").find("the server at " + socket().string() + " went away while its process"),
            std::string::npos)
      << text_of(dir_ / "client.log");
  EXPECT_TRUE(none_left());
}

}  // namespace
