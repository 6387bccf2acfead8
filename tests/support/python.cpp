#include "support/python.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace regpipe::test {

std::string python() {
  const char* chosen = std::getenv("REGPIPE_TEST_PYTHON");
  return chosen != nullptr && *chosen != '\0' ? std::string(chosen) : "python3";
}

std::optional<std::string> python_lacks(const std::string& module, const std::string& package) {
  std::string out;
  if (run_command(python() + " -c 'import " + module + "'", &out) == 0) return std::nullopt;
  // The traceback's last line says why ("ModuleNotFoundError: No module named ...").
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return python() + " cannot import " + module + " (pip install " + package + "): " +
         out.substr(out.find_last_of('\n') + 1);
}

std::vector<double> python_numbers(const TempDir& dir, const std::string& script, const std::string& args) {
  std::ofstream(dir / "script.py") << script;
  std::string out;
  EXPECT_EQ(run_command(python() + " '" + (dir / "script.py").string() + "' " + args, &out), 0) << out;
  std::istringstream words(out);
  std::vector<double> numbers;
  for (double v; words >> v;) numbers.push_back(v);
  return numbers;
}

}  // namespace regpipe::test
