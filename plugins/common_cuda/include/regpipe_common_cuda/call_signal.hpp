// The end of a cost call as the host sees it without synchronising the stream: the kernel that
// writes the call's results to page-locked host memory then writes the call's sequence number
// beside them, and the host spins on that word. On an H100 host that returns ~1.8 us sooner than
// cudaStreamSynchronize after the same kernel (bench/cost_cr_before_after/call_floor.cu), and
// the kernel's remaining work (clearing its sums for the next call, its exit) overlaps the host.
// A call split into parts (one per transform) signals when its last part is done. The wait
// falls back to cudaStreamSynchronize after kSpin, which also reports a kernel's failure.
#pragma once

#include "regpipe_common_cuda/cuda_check.hpp"
#include "regpipe_common_cuda/device_buffer.hpp"
#include "regpipe_common_cuda/pinned_buffer.hpp"

#include <chrono>

namespace regpipe_common_cuda {

// A call's signal as its kernels take it (by value).
struct CallSignalArgs {
  unsigned long long* done;  // page-locked host memory (device address)
  unsigned* finished;        // device counter of finished parts, zero between calls
  unsigned long long call;   // this call's sequence number
  unsigned parts;
};

#if defined(__CUDACC__)
// One thread of a part, once the part's results are written: the last part of the call
// publishes the call's number after them.
__device__ __forceinline__ void signal_part_done(const CallSignalArgs& s) {
  __threadfence_system();  // this part's results before the count (and the number)
  if (s.parts > 1u) {
    if (atomicAdd(s.finished, 1u) != s.parts - 1u) return;
    *s.finished = 0u;
  }
  *reinterpret_cast<volatile unsigned long long*>(s.done) = s.call;
}
#endif

class CallSignal {
 public:
  // Spinning beyond this hands the wait to cudaStreamSynchronize (long calls, failures).
  static constexpr std::chrono::microseconds kSpin{1000};

  // Allocates the signal's memory (page-locked: a few hundred microseconds), queuing its
  // clearing on `stream`; the first next() does it otherwise.
  void prepare(cudaStream_t stream) {
    if (done_.get() != nullptr) return;
    done_.ensure(1);
    *done_.get() = 0ull;
    finished_.ensure(1);
    RP_CUDA_CHECK(cudaMemsetAsync(finished_.get(), 0, sizeof(unsigned), stream));
  }

  // The signal of the next call on `stream`, of `parts` parts.
  CallSignalArgs next(unsigned parts, cudaStream_t stream) {
    prepare(stream);
    return {done_.device_view(), finished_.get(), ++call_, parts};
  }

  // Returns once the call of the last next() has signalled (its results are in host memory);
  // the stream may still be running its kernel's last instructions, which later work on the
  // stream follows.
  void wait(cudaStream_t stream) {
    // An acquire load (the CUDA sources are C++17: no std::atomic_ref): the results written
    // before the number are seen after it.
    const auto done = [this] { return __atomic_load_n(done_.get(), __ATOMIC_ACQUIRE); };
    const auto start = std::chrono::steady_clock::now();
    for (unsigned spins = 1;; ++spins) {
      if (done() == call_) return;
      if (spins % 256 == 0 && std::chrono::steady_clock::now() - start > kSpin) break;
    }
    RP_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (done() != call_)
      throw rp::Error(RP_INTERNAL, "a device call ended without signalling its results");
  }

 private:
  PinnedBuffer<unsigned long long> done_;
  DeviceBuffer<unsigned> finished_;
  unsigned long long call_ = 0;
};

}  // namespace regpipe_common_cuda
