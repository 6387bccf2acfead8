// `regpipe plugins --check` exercises every component out of process and reports each failure;
// a component id claimed by two libraries is refused where it is used, naming both files.
#include "fault_batch.hpp"

namespace fs = std::filesystem;
using regpipe::test::FaultBatch;
using regpipe::test::quoted;
using regpipe::test::run_command;

namespace {

std::string cli() { return regpipe::test::regpipe_cli().string(); }

fs::path fake_dir(const std::string& variant) {
  return (regpipe::test::bin_dir() / ".." / "test_plugins" / variant).lexically_normal();
}

// The output's line that mentions `what`, or "".
std::string line_with(const std::string& out, const std::string& what) {
  const size_t at = out.find(what);
  if (at == std::string::npos) return "";
  const size_t start = out.rfind('\n', at) == std::string::npos ? 0 : out.rfind('\n', at) + 1;
  return out.substr(start, out.find('\n', at) - start);
}

}  // namespace

TEST(PluginsCheck, EveryBuiltInComponentPasses) {
  std::string out;
  const int status = run_command(cli() + " plugins --check " + quoted(regpipe::test::plugin_dir()), &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
  for (const char* id : {"cost 'cpu.cr'", "cost 'cpu.mi'", "optimizer 'optim.powell'", "optimizer 'optim.flirt'",
                         "resampler 'resample.cpu'"})
    EXPECT_EQ(line_with(out, id).rfind("PASS", 0), 0u) << id << "\n" << out;
  EXPECT_NE(out.find(" failed"), std::string::npos) << out;
}

TEST(PluginsCheck, ReportsEachFaultOfTheFaultPlugin) {
  std::string out;
  const int status =
      run_command(cli() + " plugins --check " + quoted(regpipe::test::fault_plugin_dir()) + " --timeout 1", &out);
  EXPECT_EQ(status, 3) << out;
  const std::pair<const char*, const char*> expected[] = {
      {"cost 'test.fault.segv'", "SIGSEGV in cost 'test.fault.segv' evaluate"},
      {"cost 'test.fault.abort'", "SIGABRT in cost 'test.fault.abort' evaluate"},
      {"cost 'test.fault.hang'", "cost 'test.fault.hang' evaluate did not return within 1 s (--timeout)"},
      {"cost 'test.fault.throw'", "a C++ exception escaped the plugin across the C ABI"},
      {"cost 'test.fault.nan'", "is not finite"}};
  for (const auto& [component, why] : expected) {
    const std::string line = line_with(out, component + std::string(" in libfault_plugin.so"));
    EXPECT_EQ(line.rfind("FAIL", 0), 0u) << component << "\n" << out;
    EXPECT_NE(line.find(why), std::string::npos) << component << "\n" << out;
  }
  EXPECT_NE(out.find("1 library, 0 passed, 5 failed"), std::string::npos) << out;
}

TEST(PluginsCheck, ReportsADescriptorProblem) {
  std::string out;
  const int status = run_command(cli() + " plugins --check " + quoted(fake_dir("bad_id")), &out);
  EXPECT_EQ(status, 3) << out;
  EXPECT_NE(line_with(out, "libfake_bad_id.so").find("'Bad Id' is not lowercase dotted"), std::string::npos) << out;
}

TEST(PluginsCheck, APathThatDoesNotExistIsRefused) {
  std::string out;
  EXPECT_EQ(run_command(cli() + " plugins --check /nonexistent/plugins", &out), 2) << out;
  EXPECT_NE(out.find("plugins --check /nonexistent/plugins: no such file or folder"), std::string::npos) << out;
}

// A --plugin-path library claiming a built-in id (cpu.cr) no longer replaces it silently.
TEST_F(FaultBatch, ALibraryClaimingABuiltInIdIsRefusedNamingBothFiles) {
  const fs::path yaml = pipeline("{plugin: cpu.cr}");
  const fs::path impostor = fake_dir("claims_cpu_cr") / "libfake_claims_cpu_cr.so";
  const fs::path built_in = fs::canonical(regpipe::test::plugin_dir() / "libregpipe_cost_cpu.so");
  std::string out;
  int status = run_command(cli() + " validate " + quoted(yaml) + " --plugin-path " + quoted(impostor.parent_path()), &out);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("cost plugin 'cpu.cr' is provided by two libraries, " + impostor.string() + " and " +
                     built_in.string()),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("--plugin-override"), std::string::npos) << out;
  // With the override the first in the search order (--plugin-path) is the one used.
  status = run_command(cli() + " validate " + quoted(yaml) + " --plugin-override --plugin-path " +
                           quoted(impostor.parent_path()),
                       &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("cost      cpu.cr"), std::string::npos) << out;
  // plugins --check on both folders names the second claim.
  status = run_command(cli() + " plugins --check --plugin-path " + quoted(impostor.parent_path()), &out);
  EXPECT_NE(line_with(out, "also provided by " + impostor.string()), "") << out;
}
