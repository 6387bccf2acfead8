// The ecosystem's own readers through python3, for the interop tests: nibabel (Debian),
// SimpleITK and fslpy (PyPI). Tests that need a module skip, saying why, when it is absent.
#pragma once

#include "support/test_support.hpp"

#include <optional>
#include <string>
#include <vector>

namespace regpipe::test {

// $REGPIPE_TEST_PYTHON (scripts/test.sh points it at a venv with the readers), else python3.
std::string python();

// Why python() cannot import `module` (installed as `package`); nothing when it can.
std::optional<std::string> python_lacks(const std::string& module, const std::string& package);

// Runs `script` (written into dir) with `args`; the numbers it prints, in order.
std::vector<double> python_numbers(const TempDir& dir, const std::string& script, const std::string& args);

}  // namespace regpipe::test
