// RAII device memory (plain cudaMalloc, never managed memory), reused across evaluations:
// ensure() grows it only when a call needs more.
#pragma once

#include "regpipe_common_cuda/cuda_check.hpp"

#include <cstddef>
#include <vector>

namespace regpipe_common_cuda {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void ensure(std::size_t count) {
    if (count <= capacity_) return;
    release();
    RP_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    capacity_ = count;
  }
  // Asynchronous: `host` must stay valid until the stream has passed the copy.
  void upload(const T* host, std::size_t count, cudaStream_t stream) {
    ensure(count);
    if (count > 0)
      RP_CUDA_CHECK(cudaMemcpyAsync(data_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
    size_ = count;
  }
  void upload(const std::vector<T>& host, cudaStream_t stream) { upload(host.data(), host.size(), stream); }
  void release() {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    capacity_ = size_ = 0;
  }
  T* get() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0, size_ = 0;
};

}  // namespace regpipe_common_cuda
