// sort_and_count (Shams et al. 2010, method 3): per transform, every reference voxel's joint
// bin (reference bin * bins + moving bin) is written as a key, samples outside the moving
// image get the sentinel bins * bins; the keys are sorted on the GPU and run-length encoded,
// and each run's length is written to its histogram entry by one thread. Conflict-free: no
// atomics on the histogram. The paper sorts with a bitonic network (O(n log^2 n) compare-
// exchanges); here CUB's radix sort over only the bits the joint index needs (16 for 256 bins
// plus one for the sentinel) does the same job in a few passes. Integer counts: exact and
// bitwise repeatable.
#include "schemes.hpp"

#include <regpipe_common_cuda/cuda_check.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>

#include <algorithm>

namespace regpipe::cost_mi_cuda {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) keys_kernel(MiArgs a, uint32_t voxels, int t, uint32_t sentinel,
                                                        uint32_t* keys) {
  const double* m = a.maps + 12 * std::size_t(t);
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < voxels; i += gridDim.x * blockDim.x) {
    const int bin = joint_bin(a, m, i);
    keys[i] = bin >= 0 ? uint32_t(bin) : sentinel;
  }
}

// Run r's length to its entry: distinct keys, so no two threads write one counter.
__global__ void __launch_bounds__(kThreads) scatter_runs_kernel(const uint32_t* unique, const uint32_t* counts,
                                                                const uint32_t* run_count, uint32_t sentinel,
                                                                unsigned* joint) {
  const uint32_t runs = *run_count;
  for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += gridDim.x * blockDim.x)
    if (unique[r] != sentinel) joint[unique[r]] = counts[r];
}

// Offsets of the workspace's parts, each 256-byte aligned as CUB wants its temp storage.
struct Layout {
  std::size_t keys_in, keys_out, unique, counts, run_count, temp, temp_bytes, total;
};

std::size_t align(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

Layout layout(uint32_t voxels, uint32_t sentinel, int end_bit, cudaStream_t stream) {
  const int n = int(voxels);  // <= INT_MAX, checked in set_reference
  std::size_t sort_bytes = 0, encode_bytes = 0;
  RP_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, static_cast<const uint32_t*>(nullptr),
                                               static_cast<uint32_t*>(nullptr), n, 0, end_bit, stream));
  RP_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, encode_bytes, static_cast<const uint32_t*>(nullptr),
                                                   static_cast<uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr),
                                                   static_cast<uint32_t*>(nullptr), n, stream));
  const std::size_t keys = align(std::size_t(voxels) * sizeof(uint32_t));
  const std::size_t runs = align((std::size_t(sentinel) + 1) * sizeof(uint32_t));  // at most every key + sentinel
  Layout l{};
  l.keys_in = 0;
  l.keys_out = l.keys_in + keys;
  l.unique = l.keys_out + keys;
  l.counts = l.unique + runs;
  l.run_count = l.counts + runs;
  l.temp = l.run_count + align(sizeof(uint32_t));
  l.temp_bytes = std::max(sort_bytes, encode_bytes);
  l.total = l.temp + align(l.temp_bytes);
  return l;
}

// The bits that hold every key up to `largest` (CUDA here is C++17: no std::bit_width).
int bits_for(uint32_t largest) {
  int bits = 0;
  while (bits < 32 && (largest >> bits) != 0u) ++bits;
  return bits;
}

unsigned grid_for(std::size_t items, int sm_count) {
  const std::size_t needed = (items + kThreads - 1) / kThreads;
  return unsigned(std::max<std::size_t>(1, std::min<std::size_t>(needed, std::size_t(sm_count) * 32)));
}

}  // namespace

void run_sort_and_count(const SchemeLaunch& l) {
  const uint32_t sentinel = uint32_t(l.args.bins) * uint32_t(l.args.bins);
  const int end_bit = bits_for(sentinel);  // every key, the sentinel included, sorts within [0, end_bit)
  const Layout parts = layout(l.voxel_count, sentinel, end_bit, l.stream);
  l.scratch->ensure(parts.total);
  unsigned char* base = l.scratch->get();
  auto* keys_in = reinterpret_cast<uint32_t*>(base + parts.keys_in);
  auto* keys_out = reinterpret_cast<uint32_t*>(base + parts.keys_out);
  auto* unique = reinterpret_cast<uint32_t*>(base + parts.unique);
  auto* counts = reinterpret_cast<uint32_t*>(base + parts.counts);
  auto* run_count = reinterpret_cast<uint32_t*>(base + parts.run_count);
  void* temp = base + parts.temp;
  const int n = int(l.voxel_count);
  const std::size_t entries = std::size_t(sentinel);
  for (std::size_t t = 0; t < l.k; ++t) {
    keys_kernel<<<grid_for(l.voxel_count, l.sm_count), kThreads, 0, l.stream>>>(l.args, l.voxel_count, int(t),
                                                                                 sentinel, keys_in);
    RP_CUDA_CHECK_LAUNCH("keys_kernel");
    std::size_t bytes = parts.temp_bytes;
    RP_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_out, n, 0, end_bit, l.stream));
    bytes = parts.temp_bytes;
    RP_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp, bytes, keys_out, unique, counts, run_count, n, l.stream));
    scatter_runs_kernel<<<grid_for(entries + 1, l.sm_count), kThreads, 0, l.stream>>>(
        unique, counts, run_count, sentinel, l.args.joint + t * entries);
    RP_CUDA_CHECK_LAUNCH("scatter_runs_kernel");
  }
}

}  // namespace regpipe::cost_mi_cuda
