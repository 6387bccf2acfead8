#include "texture_volume.hpp"

#include <regpipe_common_cuda/cuda_check.hpp>

namespace regpipe::resample_cuda {

cudaTextureObject_t TextureVolume::load(const float* device_data, Extent extent, cudaStream_t stream) {
  const cudaExtent size = make_cudaExtent(extent.nx, extent.ny, extent.nz);
  if (array_ == nullptr || extent.nx != extent_.nx || extent.ny != extent_.ny || extent.nz != extent_.nz) {
    release();
    const cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
    RP_CUDA_CHECK(cudaMalloc3DArray(&array_, &format, size));
    extent_ = extent;
    cudaResourceDesc resource{};
    resource.resType = cudaResourceTypeArray;
    resource.res.array.array = array_;
    cudaTextureDesc texture{};
    for (auto& mode : texture.addressMode) mode = cudaAddressModeClamp;
    texture.filterMode = cudaFilterModeLinear;
    texture.readMode = cudaReadModeElementType;
    texture.normalizedCoords = 0;
    RP_CUDA_CHECK(cudaCreateTextureObject(&texture_, &resource, &texture, nullptr));
  }
  cudaMemcpy3DParms copy{};
  copy.srcPtr = make_cudaPitchedPtr(const_cast<float*>(device_data), extent.nx * sizeof(float), extent.nx, extent.ny);
  copy.dstArray = array_;
  copy.extent = size;
  copy.kind = cudaMemcpyDeviceToDevice;
  RP_CUDA_CHECK(cudaMemcpy3DAsync(&copy, stream));
  return texture_;
}

void TextureVolume::release() {
  if (texture_ != 0) cudaDestroyTextureObject(texture_);
  if (array_ != nullptr) cudaFreeArray(array_);
  texture_ = 0;
  array_ = nullptr;
  extent_ = {0, 0, 0};
}

}  // namespace regpipe::resample_cuda
