// The parent's half of `regpipe plugins --check` (plugin_exercise.cpp is the child's): a child
// process per library to load it, then one per component to exercise it; each child's report
// lines (and, when it dies, the crash reporter's "fault" line or its signal) make the verdict.
#include <regpipe/host/plugin_check.hpp>

#include "process/worker_process.hpp"

#include <cstdio>
#include <map>
#include <optional>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

// What one child said, and how it ended.
struct ChildReport {
  std::vector<std::string> components, problems;  // a library child's
  std::optional<CheckFinding::Verdict> verdict;   // a component child's
  std::string detail, last_step, fault;
  WorkerExit exit;
};

ChildReport run_child(const std::vector<std::string>& args, double timeout_s) {
  WorkerStart start;
  start.quiet = true;
  WorkerProcess child(args, start);
  ChildReport r;
  // The child's watchdog ends a plugin call at timeout_s; this is for a child wedged beyond
  // it (or a library that hangs while it loads, before any watchdog runs).
  const std::chrono::duration<double> silence(timeout_s + 10.0);
  while (const std::optional<std::string> line = child.next_line(silence)) {
    const std::vector<std::string> f = report_fields(*line);
    const std::string rest = f.size() > 1 ? line->substr(f[0].size() + 1) : "";
    if (f[0] == "component") r.components.push_back(rest);
    else if (f[0] == "problem") r.problems.push_back(rest);
    else if (f[0] == "step") r.last_step = rest;
    else if (f[0] == "pass") r.verdict = CheckFinding::Verdict::pass;
    else if (f[0] == "skip") r.verdict = CheckFinding::Verdict::skip, r.detail = rest;
    else if (f[0] == "fail") r.verdict = CheckFinding::Verdict::fail, r.detail = rest;
    else if (f[0] == "fault" && f.size() >= 4) r.fault = f[3];
  }
  r.exit = child.wait();
  return r;
}

// Why a child that gave no verdict ended, or "" when it ended normally.
std::string abnormal_end(const ChildReport& r, double timeout_s) {
  const std::string during = r.last_step.empty() ? "" : " during " + r.last_step;
  if (!r.fault.empty()) return r.fault;
  if (r.exit.silent) return "no answer for " + std::to_string(int(timeout_s + 10.0)) + " s" + during;
  if (r.exit.signal != 0) return "crashed with " + signal_name(r.exit.signal) + during;
  if (r.exit.exit_status != 0) return "ended with exit status " + std::to_string(r.exit.exit_status) + during;
  return "";
}

}  // namespace

std::vector<CheckFinding> check_plugin_libraries(const std::vector<fs::path>& libraries, double timeout_s) {
  using Verdict = CheckFinding::Verdict;
  std::vector<CheckFinding> findings;
  std::map<std::string, fs::path> claimed;  // "cost:cpu.cr" -> the first library claiming it
  char timeout[32];
  std::snprintf(timeout, sizeof(timeout), "%g", timeout_s);
  for (const fs::path& library : libraries) {
    const ChildReport loaded = run_child({"plugins", kCheckLibraryOption, library.string()}, timeout_s);
    if (std::string why = abnormal_end(loaded, timeout_s); !why.empty()) {
      findings.push_back({library, "", Verdict::fail, "loading it: " + why});
      continue;
    }
    for (const std::string& problem : loaded.problems) findings.push_back({library, "", Verdict::fail, problem});
    for (const std::string& kind_and_id : loaded.components) {
      const size_t colon = kind_and_id.find(':');
      const std::string name = kind_and_id.substr(0, colon) + " '" + kind_and_id.substr(colon + 1) + "'";
      if (const auto [first, inserted] = claimed.emplace(kind_and_id, library); !inserted)
        findings.push_back({library, name, Verdict::fail, "also provided by " + first->second.string()});
      const ChildReport r = run_child({"plugins", kCheckLibraryOption, library.string(), kCheckComponentOption,
                                       kind_and_id, kCheckTimeoutOption, timeout},
                                      timeout_s);
      if (std::string why = abnormal_end(r, timeout_s); !why.empty())
        findings.push_back({library, name, Verdict::fail, why});
      else if (!r.verdict)
        findings.push_back({library, name, Verdict::fail, "the check ended without a verdict" +
                                                              (r.last_step.empty() ? "" : " after " + r.last_step)});
      else
        findings.push_back({library, name, *r.verdict, r.detail});
    }
  }
  return findings;
}

}  // namespace regpipe
