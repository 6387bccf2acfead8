// Issue 2's known-transform cases (tests/registration/known_transform_cases.hpp) with the CUDA
// costs in place of the CPU ones (issues 3 and 4): the same images, pipeline (optim.powell,
// 8/4/2/1 mm, 12 DOF) and bars. Skipped without a CUDA device.
#include "registration/known_transform_cases.hpp"

namespace {

const regpipe::test::CostCase kCudaCosts[] = {{"CR", "cuda.cr", {{"bins", "256"}}},
                                              {"MI", "cuda.mi", {{"bins", "64"}}},
                                              {"NMI", "cuda.nmi", {{"bins", "64"}}}};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Cuda, KnownTransform, ::testing::ValuesIn(kCudaCosts), regpipe::test::case_name);
