// A GoogleTest fixture for tests that drive CUDA themselves (not through a plugin): skips
// without a device (naming the CUDA error), selects device 0 and gives the test a stream of
// its own, destroyed after it. Only for sources built with REGPIPE_TESTS_WITH_CUDA.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

namespace regpipe::test {

class CudaStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
      GTEST_SKIP() << "no CUDA device: " << (e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  void sync() { ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess); }

  cudaStream_t stream_ = nullptr;
};

}  // namespace regpipe::test
