// Issue 2's known-transform cases (known_transform_cases.hpp) on the CPU path, CR and MI.
#include "registration/known_transform_cases.hpp"

namespace {

const regpipe::test::CostCase kCpuCosts[] = {{"CR", "cpu.cr", {{"bins", "256"}}},
                                             {"MI", "cpu.mi", {{"bins", "64"}}}};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Cpu, KnownTransform, ::testing::ValuesIn(kCpuCosts), regpipe::test::case_name);
