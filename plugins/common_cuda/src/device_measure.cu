#include "regpipe_common_cuda/device_measure.hpp"

#include "regpipe_common_cuda/kernel_loading.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace regpipe_common_cuda {
namespace {

// Floats as unsigned integers in the same order (negative ones reversed), so that integer
// atomics take their min and max.
__device__ unsigned ordered_key(float f) {
  const unsigned u = __float_as_uint(f);
  return (u & 0x80000000u) != 0 ? ~u : u | 0x80000000u;
}
float float_of_key(unsigned key) {
  const unsigned u = (key & 0x80000000u) != 0 ? key & 0x7fffffffu : ~key;
  float f;
  static_assert(sizeof f == sizeof u);
  std::memcpy(&f, &u, sizeof f);
  return f;
}

constexpr int kThreads = 256;
constexpr unsigned long long kNone = ~0ull;

// result[0]: min key, result[1]: max key (of the finite values), result[2]: the first index
// of a non-finite value (kNone without one); partials[2 b], [2 b + 1]: block b's sum and sum of
// absolute values in double (a fixed tree per block: repeatable on one device).
__global__ void scan_kernel(const float* data, std::size_t count, unsigned long long* result, double* partials) {
  unsigned lo = ~0u, hi = 0u;
  unsigned long long bad = kNone;
  double sum = 0.0, abs_sum = 0.0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float v = data[i];
    if (!isfinite(v)) {
      bad = bad < i ? bad : i;
      continue;
    }
    const unsigned key = ordered_key(v);
    lo = key < lo ? key : lo;
    hi = key > hi ? key : hi;
    sum += v;
    abs_sum += fabs(double(v));
  }
  __shared__ unsigned s_lo, s_hi;
  __shared__ unsigned long long s_bad;
  __shared__ double s_sum[kThreads], s_abs[kThreads];
  if (threadIdx.x == 0) {
    s_lo = ~0u;
    s_hi = 0u;
    s_bad = kNone;
  }
  s_sum[threadIdx.x] = sum;
  s_abs[threadIdx.x] = abs_sum;
  __syncthreads();
  atomicMin(&s_lo, lo);
  atomicMax(&s_hi, hi);
  if (bad != kNone) atomicMin(&s_bad, bad);
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) {
      s_sum[threadIdx.x] += s_sum[threadIdx.x + half];
      s_abs[threadIdx.x] += s_abs[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicMin(result, (unsigned long long)s_lo);
    atomicMax(result + 1, (unsigned long long)s_hi);
    if (s_bad != kNone) atomicMin(result + 2, s_bad);
    partials[2 * blockIdx.x] = s_sum[0];
    partials[2 * blockIdx.x + 1] = s_abs[0];
  }
}

}  // namespace

void load_measure_kernels() { load_kernels({reinterpret_cast<const void*>(scan_kernel)}); }

void require_on_device(const rp_device_image& image, int device, const std::string& role) {
  if (image.device != device)
    throw rp::Error(RP_INVALID_ARGUMENT, "the " + role + " device image is on device " + std::to_string(image.device) +
                                             "; this instance runs on device " + std::to_string(device));
}

DeviceMeasurement measure_device_image(const rp_device_image& image, const std::string& role, cudaStream_t stream,
                                       MeasureScratch& scratch) {
  // The header's checks first, on an rp_image of the same header (its data is not read).
  DeviceMeasurement out;
  regpipe_common::MeasuredImage& m = out.image;
  m = regpipe_common::measure_header(regpipe_common::image_view(image.dims, image.voxel_to_world, image.data), role);
  int sms = 1, device = 0;
  RP_CUDA_CHECK(cudaGetDevice(&device));
  RP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::size_t needed = (m.voxel_count + kThreads - 1) / kThreads;
  const unsigned blocks = unsigned(std::min<std::size_t>(needed, std::size_t(sms) * 8));
  const unsigned long long init[3] = {~0u, 0u, kNone};
  scratch.found.ensure(3);
  scratch.partials.ensure(2 * std::size_t(blocks));
  RP_CUDA_CHECK(cudaMemcpyAsync(scratch.found.get(), init, sizeof init, cudaMemcpyHostToDevice, stream));
  scan_kernel<<<blocks, kThreads, 0, stream>>>(image.data, m.voxel_count, scratch.found.get(), scratch.partials.get());
  RP_CUDA_CHECK_LAUNCH("scan_kernel");
  unsigned long long found[3] = {};
  std::vector<double> partials(2 * std::size_t(blocks));
  RP_CUDA_CHECK(cudaMemcpyAsync(found, scratch.found.get(), sizeof found, cudaMemcpyDeviceToHost, stream));
  RP_CUDA_CHECK(cudaMemcpyAsync(partials.data(), scratch.partials.get(), partials.size() * sizeof(double),
                                cudaMemcpyDeviceToHost, stream));
  RP_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (found[2] != kNone) {
    float value = 0.f;
    RP_CUDA_CHECK(cudaMemcpy(&value, image.data + found[2], sizeof value, cudaMemcpyDeviceToHost));
    regpipe_common::fail_non_finite(role + " image", m.grid, std::size_t(found[2]), value);
  }
  m.min_value = m.min_all = float_of_key(unsigned(found[0]));
  m.max_value = m.max_all = float_of_key(unsigned(found[1]));
  for (unsigned b = 0; b < blocks; ++b) {
    out.sum += partials[2 * b];
    out.abs_sum += partials[2 * b + 1];
  }
  return out;
}

}  // namespace regpipe_common_cuda
