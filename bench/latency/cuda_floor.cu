// What any CUDA process pays on this host before and after its work (issue 17's whole-command
// latency): driver initialisation (cuInit), the primary context, one allocation and one kernel,
// then the exit. Prints the phases in seconds; the caller times the whole process, so the
// difference is process start and context teardown.
//
//   cuda_floor [reset]     reset: time cudaDeviceReset (the context teardown) explicitly
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>

using Clock = std::chrono::steady_clock;

static double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

__global__ void touch(float* p) { p[threadIdx.x] = 1.f; }

int main(int argc, char** argv) {
  const auto t0 = Clock::now();
  cuInit(0);
  const auto t1 = Clock::now();
  cudaFree(nullptr);  // creates the primary context
  const auto t2 = Clock::now();
  float* p = nullptr;
  cudaMalloc(&p, 256 << 20);
  touch<<<1, 32>>>(p);
  cudaDeviceSynchronize();
  const auto t3 = Clock::now();
  std::printf("cuInit %.3f s, primary context %.3f s, allocation and kernel %.3f s", seconds(t0, t1),
              seconds(t1, t2), seconds(t2, t3));
  if (argc > 1 && std::strcmp(argv[1], "reset") == 0) {
    cudaDeviceReset();
    std::printf(", context teardown %.3f s", seconds(t3, Clock::now()));
  }
  std::printf("\n");
  return 0;
}
