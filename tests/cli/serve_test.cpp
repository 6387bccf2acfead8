// regpipe serve and REGPIPE_SERVER: a command handed to a process started ahead gives what it
// gives here (outputs, messages, exit status), Ctrl-C and a killed client reach it, and the
// server stops cleanly.
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace fs = std::filesystem;
using regpipe::test::BackgroundCommand;
using regpipe::test::run_command;

namespace {

std::string shell_quoted(const fs::path& p) { return "'" + p.string() + "'"; }

std::string file_text(const fs::path& p) {
  std::ostringstream text;
  text << std::ifstream(p, std::ios::binary).rdbuf();
  return text.str();
}

bool appears(const fs::path& path, std::chrono::seconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class ServeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string out;
    ASSERT_EQ(run_command(cli() + " phantom " + shell_quoted(dir_ / "demo") + " --size 40 --voxel-mm 4", &out), 0) << out;
    server_ = std::make_unique<BackgroundCommand>(cli() + " serve --ready 1 --socket " + shell_quoted(socket()),
                                                  dir_ / "serve.log");
    ASSERT_TRUE(appears(socket(), std::chrono::seconds(20))) << file_text(dir_ / "serve.log");
  }
  static std::string cli() { return regpipe::test::regpipe_cli().string(); }
  fs::path socket() const { return dir_ / "serve.sock"; }
  std::string through_server() const { return "env REGPIPE_SERVER=" + shell_quoted(socket()) + " " + cli(); }
  // The phantom's registration (cpu.cr, the same on every machine) into `out`.
  std::string run_into(const std::string& out) const {
    return " run " + shell_quoted(dir_ / "demo" / "pipeline.yaml") +
           " --set registration.cost.plugin=cpu.cr --set outputs.dir=" + shell_quoted(dir_ / out);
  }
  // A registration of a few seconds (a larger phantom) started through the server into `out`,
  // left running 1.5 s.
  std::unique_ptr<BackgroundCommand> start_long_command(const std::string& out, const std::string& options = "") {
    std::string made;
    EXPECT_EQ(run_command(cli() + " phantom " + shell_quoted(dir_ / "big") + " --size 96 --voxel-mm 2", &made), 0) << made;
    auto client = std::make_unique<BackgroundCommand>(
        through_server() + " run " + shell_quoted(dir_ / "big" / "pipeline.yaml") + options +
            " --set registration.cost.plugin=cpu.cr --set outputs.dir=" + shell_quoted(dir_ / out),
        dir_ / "client.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    return client;
  }
  // Processes of this server waiting or serving a command (the pattern's bracket keeps the
  // shell that runs pgrep from matching it).
  int server_processes() const {
    std::string out;
    run_command("pgrep -fc -- " + shell_quoted(dir_.path().string() + "/[s]erve.sock --one-command"), &out);
    return std::atoi(out.c_str());
  }

  regpipe::test::TempDir dir_;
  std::unique_ptr<BackgroundCommand> server_;
};

// CPU seconds used by this process's ended children (a client, not the server's processes).
double children_cpu_s() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

TEST_F(ServeCli, ACommandThroughTheServerGivesWhatItGivesHere) {
  std::string here, there;
  const double before = children_cpu_s();
  ASSERT_EQ(run_command(cli() + run_into("here"), &here), 0) << here;
  const double between = children_cpu_s();
  ASSERT_EQ(run_command(through_server() + run_into("there"), &there), 0) << there;
  // The registration's arithmetic ran in the server's process, not in the client.
  EXPECT_LT(children_cpu_s() - between, 0.5 * (between - before));
  for (const char* file : {"transform_world.txt", "transform.mat", "registered.nii.gz"})
    EXPECT_EQ(file_text(dir_ / "here" / file), file_text(dir_ / "there" / file)) << file;
  // The run's summary reached this side's standard output.
  EXPECT_NE(there.find("mean displacement error against the truth"), std::string::npos) << there;
  EXPECT_EQ(there.find("warning"), std::string::npos) << there;
  // The server started another process in place of the one that served.
  EXPECT_NE(file_text(dir_ / "serve.log").find("listening at"), std::string::npos);
}

TEST_F(ServeCli, BadInputThereExitsTwoWithItsMessageHere) {
  std::string out;
  EXPECT_EQ(run_command(through_server() + run_into("bad") + " --set registration.dof=5", &out), 2);
  EXPECT_NE(out.find("registration.dof=5 is not one of"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

TEST_F(ServeCli, RelativePathsAreTheClientsWorkingFolders) {
  std::string out;
  ASSERT_EQ(run_command("cd " + shell_quoted(dir_.path()) + " && " + through_server() +
                            " run demo/pipeline.yaml --quiet --set registration.cost.plugin=cpu.cr --set outputs.dir=relative",
                        &out),
            0)
      << out;
  EXPECT_TRUE(fs::exists(dir_ / "relative" / "transform_world.txt"));
}

TEST_F(ServeCli, WithoutAServerTheCommandRunsHereAfterAWarning) {
  std::string out;
  const std::string command = "env REGPIPE_SERVER=" + shell_quoted(dir_ / "nobody.sock") + " " + cli() + run_into("alone");
  ASSERT_EQ(run_command(command, &out), 0) << out;
  EXPECT_NE(out.find("no server there"), std::string::npos) << out;
  EXPECT_NE(out.find("running in this process"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(dir_ / "alone" / "transform_world.txt"));
}

TEST_F(ServeCli, ASecondServerOnTheSameSocketIsRefused) {
  std::string out;
  EXPECT_EQ(run_command(cli() + " serve --socket " + shell_quoted(socket()), &out), 2);
  EXPECT_NE(out.find("a server already listens at"), std::string::npos) << out;
}

TEST_F(ServeCli, CtrlCReachesTheCommandThere) {
  const std::unique_ptr<BackgroundCommand> client = start_long_command("stopped");
  client->signal(SIGINT);
  EXPECT_EQ(client->wait(), 130) << file_text(dir_ / "client.log");
  EXPECT_NE(file_text(dir_ / "client.log").find("cancelled"), std::string::npos) << file_text(dir_ / "client.log");
  EXPECT_FALSE(fs::exists(dir_ / "stopped"));
}

TEST_F(ServeCli, AKilledClientEndsItsCommand) {
  const std::unique_ptr<BackgroundCommand> client = start_long_command("orphan");
  ASSERT_EQ(server_processes(), 2);  // one serving the command, one waiting
  client->signal(SIGKILL);
  client->wait();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server_processes() != 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(server_processes(), 1);
  EXPECT_FALSE(fs::exists(dir_ / "orphan"));
}

TEST_F(ServeCli, AConnectionThatSendsNothingIsDroppedAfterTenSeconds) {
  const int silent = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", socket().c_str());
  ASSERT_EQ(::connect(silent, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(server_processes(), 2);  // the one holding the silent connection, and its replacement
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (server_processes() != 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(server_processes(), 1);
  ::close(silent);
  std::string out;
  EXPECT_EQ(run_command(through_server() + run_into("after") + " --quiet", &out), 0) << out;
  EXPECT_EQ(out.find("warning"), std::string::npos) << out;
}

TEST_F(ServeCli, CtrlCStopsTheServerAfterTheCommandInProgress) {
  const std::unique_ptr<BackgroundCommand> client = start_long_command("finished", " --quiet");
  server_->signal(SIGINT);
  EXPECT_EQ(client->wait(), 0) << file_text(dir_ / "client.log");
  EXPECT_EQ(server_->wait(), 0) << file_text(dir_ / "serve.log");
  EXPECT_TRUE(fs::exists(dir_ / "finished" / "transform_world.txt"));
  EXPECT_FALSE(fs::exists(socket()));
  EXPECT_EQ(server_processes(), 0);
}

}  // namespace
