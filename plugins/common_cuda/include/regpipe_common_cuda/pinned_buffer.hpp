// Page-locked host memory for the per-evaluation copy back: a pageable destination makes
// cudaMemcpyAsync stage through a driver buffer and synchronise, which costs tens of
// microseconds per call — the whole evaluation at the 8 mm level.
#pragma once

#include "regpipe_common_cuda/cuda_check.hpp"

#include <cstddef>

namespace regpipe_common_cuda {

template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void ensure(std::size_t count) {
    if (count <= capacity_) return;
    if (data_ != nullptr) cudaFreeHost(data_);
    data_ = nullptr;
    capacity_ = 0;
    device_ = nullptr;
    RP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    capacity_ = count;
  }
  T* get() const { return data_; }
  // The device address of the same memory (unified addressing): kernels write results there
  // in place, no copy back. Asked of the runtime once per allocation (a cost call asks every
  // time).
  T* device_view() const {
    if (device_ == nullptr) {
      void* device = nullptr;
      RP_CUDA_CHECK(cudaHostGetDevicePointer(&device, data_, 0));
      device_ = static_cast<T*>(device);
    }
    return device_;
  }

 private:
  T* data_ = nullptr;
  mutable T* device_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace regpipe_common_cuda
