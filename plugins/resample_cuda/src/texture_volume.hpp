// A float volume in a CUDA array with a texture object doing trilinear filtering in hardware
// (unnormalised coordinates, texel centres at integer + 0.5). Reallocated only when the
// volume's size changes.
#pragma once

#include "kernels.hpp"

#include <cuda_runtime.h>

namespace regpipe::resample_cuda {

class TextureVolume {
 public:
  TextureVolume() = default;
  ~TextureVolume() { release(); }
  TextureVolume(const TextureVolume&) = delete;
  TextureVolume& operator=(const TextureVolume&) = delete;

  // Copies `device_data` (extent voxels, x fastest) into the array; returns the texture.
  cudaTextureObject_t load(const float* device_data, Extent extent, cudaStream_t stream);

 private:
  void release();

  cudaArray_t array_ = nullptr;
  cudaTextureObject_t texture_ = 0;
  Extent extent_{0, 0, 0};
};

}  // namespace regpipe::resample_cuda
