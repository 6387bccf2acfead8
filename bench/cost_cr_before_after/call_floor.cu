// What a cost call's fixed part can cost on this device at best (issue 17, cuda.cr's ~22 us per
// call): median microseconds of the round trips a call is made of, each repeated 2000 times on
// a non-blocking stream, as the plugin uses it:
//   launch+sync       an empty <<<1, 32>>> kernel and cudaStreamSynchronize;
//   params+sync       the same kernel with 1 KB of parameters (fused's are ~0.8 KB);
//   ticket+sync       <<<80, 256>>> (fused's 8 mm grid): every block takes an atomic ticket
//                     after a threadfence, the last writes a double to page-locked host memory;
//   ticket+poll       the same, the host spinning on a sequence number the last block writes
//                     after __threadfence_system instead of synchronising the stream;
//   launch API        the host time of the cudaLaunchKernel call alone (no wait);
//   event             the same ticket kernel's GPU time between two events.
//
//   nvcc -O2 -arch=sm_90 -o call_floor call_floor.cu && ./call_floor
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <vector>

using Clock = std::chrono::steady_clock;

struct Big {
  double m[128];
};

__global__ void empty_kernel() {}
__global__ void params_kernel(const __grid_constant__ Big b) {
  if (b.m[threadIdx.x] == 42.0) printf("never\n");
}

__global__ void ticket_kernel(unsigned* ticket, double* out, unsigned long long* done, unsigned long long seq) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  *ticket = 0u;
  *out = double(seq);
  if (done != nullptr) {
    __threadfence_system();
    *reinterpret_cast<volatile unsigned long long*>(done) = seq;
  }
}

template <class F>
double median_us(F&& f, int n = 2000) {
  std::vector<double> t(n);
  for (int i = 0; i < 50; ++i) f();
  for (int i = 0; i < n; ++i) {
    const auto a = Clock::now();
    f();
    t[i] = std::chrono::duration<double, std::micro>(Clock::now() - a).count();
  }
  std::nth_element(t.begin(), t.begin() + n / 2, t.end());
  return t[n / 2];
}

int main() {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  unsigned* ticket = nullptr;
  cudaMalloc(&ticket, sizeof(unsigned));
  cudaMemset(ticket, 0, sizeof(unsigned));
  double* out = nullptr;
  unsigned long long* done = nullptr;
  cudaMallocHost(&out, sizeof(double));
  cudaMallocHost(&done, sizeof(unsigned long long));
  *done = 0;
  Big big{};
  unsigned long long seq = 0;
  std::printf("launch+sync %.2f us\n", median_us([&] {
                empty_kernel<<<1, 32, 0, s>>>();
                cudaStreamSynchronize(s);
              }));
  std::printf("params+sync %.2f us\n", median_us([&] {
                params_kernel<<<1, 32, 0, s>>>(big);
                cudaStreamSynchronize(s);
              }));
  std::printf("ticket+sync %.2f us\n", median_us([&] {
                ticket_kernel<<<80, 256, 0, s>>>(ticket, out, nullptr, ++seq);
                cudaStreamSynchronize(s);
              }));
  std::printf("ticket+poll %.2f us\n", median_us([&] {
                ticket_kernel<<<80, 256, 0, s>>>(ticket, out, done, ++seq);
                while (std::atomic_ref<unsigned long long>(*done).load(std::memory_order_acquire) != seq) {
                }
              }));
  cudaStreamSynchronize(s);
  std::printf("launch API %.2f us\n", median_us([&] {
                ticket_kernel<<<80, 256, 0, s>>>(ticket, out, nullptr, ++seq);
              }, 500));
  cudaStreamSynchronize(s);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> gpu;
  for (int i = 0; i < 500; ++i) {
    cudaEventRecord(e0, s);
    ticket_kernel<<<80, 256, 0, s>>>(ticket, out, nullptr, ++seq);
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0.f;
    cudaEventElapsedTime(&ms, e0, e1);
    gpu.push_back(ms * 1000.f);
  }
  std::nth_element(gpu.begin(), gpu.begin() + 250, gpu.end());
  std::printf("event (ticket kernel's GPU time) %.2f us\n", gpu[250]);
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
