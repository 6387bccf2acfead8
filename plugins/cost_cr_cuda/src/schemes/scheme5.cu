// scheme5 (Li & Kumar 2014, section III.E): conflict-free. Once per reference (set_reference),
// the voxels with weight > 0 are sorted by bin on the GPU (Thrust) and each bin's run is cut
// into chunks of at most max_block_workload voxels (the paper's 768). A block owns one chunk:
// every voxel it reads falls in one bin, so three registers per thread and a block reduction
// replace all atomics; a final kernel adds each bin's chunks in order. Bitwise repeatable.
#include "../kernels/cr_sample.cuh"
#include "schemes.hpp"

#include <thrust/device_ptr.h>
#include <thrust/sort.h>

#include <algorithm>

namespace regpipe::cost_cr_cuda {
namespace {

constexpr int kMaxThreads = 1024;

// Block j reduces chunk j into partials[j * 4 + {w, wy, wyy, overlap}] (fixed tree order).
__global__ void scheme5_chunks(CrArgs a, const uint32_t* sorted, const int4* chunks, int t, double* partials) {
  __shared__ double red[4][kMaxThreads];
  const int4 chunk = chunks[blockIdx.x];
  const double* m = a.maps + 12 * t;
  float w = 0.f, wy = 0.f, wyy = 0.f;
  double overlap = 0.0;
  for (int i = chunk.y + threadIdx.x; i < chunk.z; i += blockDim.x) {
    const CrSample s = sample_voxel(a, m, sorted[i]);
    overlap += s.overlap;
    if (!(s.weight > 0.f)) continue;
    w += s.weight;
    wy += s.weight * s.y;
    wyy += s.weight * s.y * s.y;
  }
  red[0][threadIdx.x] = w;
  red[1][threadIdx.x] = wy;
  red[2][threadIdx.x] = wyy;
  red[3][threadIdx.x] = overlap;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half)
      for (int c = 0; c < 4; ++c) red[c][threadIdx.x] += red[c][threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x < 4) partials[std::size_t(blockIdx.x) * 4 + threadIdx.x] = red[threadIdx.x][0];
}

// Thread b adds bin b's chunk partials in order; thread `bins` adds every chunk's overlap.
__global__ void scheme5_merge(CrArgs a, int t, const double* partials, const int* bin_first_chunk, int chunk_count) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > a.bins) return;
  if (b == a.bins) {
    double overlap = 0.0;
    for (int j = 0; j < chunk_count; ++j) overlap += partials[std::size_t(j) * 4 + 3];
    a.overlap[t] = overlap;
    return;
  }
  double s[3] = {0.0, 0.0, 0.0};
  for (int j = bin_first_chunk[b]; j < bin_first_chunk[b + 1]; ++j)
    for (int c = 0; c < 3; ++c) s[c] += partials[std::size_t(j) * 4 + c];
  double* out = a.sums + (std::size_t(t) * a.bins + b) * kSumsPerBin;
  for (int c = 0; c < 3; ++c) out[c] = s[c];
}

}  // namespace

void presort_reference(const int32_t* host_bins, const std::vector<uint32_t>& active, int bins,
                       int max_workload, cudaStream_t stream, PresortBuffers& buffers,
                       ReferenceLayouts& layouts) {
  // Sort on the device (the paper's Thrust step): keys = bins of the active voxels.
  std::vector<int32_t> keys(active.size());
  std::vector<int> count(std::size_t(bins), 0);
  for (std::size_t i = 0; i < active.size(); ++i) {
    keys[i] = host_bins[active[i]];
    ++count[std::size_t(keys[i])];
  }
  DeviceBuffer<int32_t> device_keys;
  device_keys.upload(keys, stream);
  buffers.sorted.upload(active, stream);
  thrust::stable_sort_by_key(thrust::cuda::par.on(stream), thrust::device_ptr<int32_t>(device_keys.get()),
                             thrust::device_ptr<int32_t>(device_keys.get() + keys.size()),
                             thrust::device_ptr<uint32_t>(buffers.sorted.get()));
  RP_CUDA_CHECK_LAUNCH("thrust::stable_sort_by_key");
  // Chunks: each bin's run [start, start + count) cut at max_workload voxels.
  std::vector<int4> chunks;
  std::vector<int> first(std::size_t(bins) + 1, 0);
  int start = 0;
  for (int b = 0; b < bins; ++b) {
    first[std::size_t(b)] = int(chunks.size());
    for (int s = start; s < start + count[std::size_t(b)]; s += max_workload)
      chunks.push_back(make_int4(b, s, std::min(s + max_workload, start + count[std::size_t(b)]), 0));
    start += count[std::size_t(b)];
  }
  first[std::size_t(bins)] = int(chunks.size());
  buffers.chunks.upload(chunks, stream);
  buffers.bin_first_chunk.upload(first, stream);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream));  // device_keys dies here
  layouts.sorted = buffers.sorted.get();
  layouts.chunks = buffers.chunks.get();
  layouts.bin_first_chunk = buffers.bin_first_chunk.get();
  layouts.chunk_count = int(chunks.size());
}

void run_scheme5(const SchemeLaunch& l) {
  const ReferenceLayouts& r = *l.layouts;
  if (r.chunk_count == 0) return;  // no active voxel: sums and overlap stay 0
  const int threads = std::min(l.threads_per_block, kMaxThreads);
  l.scratch_double->ensure(std::size_t(r.chunk_count) * 4);
  for (std::size_t t = 0; t < l.k; ++t) {
    scheme5_chunks<<<r.chunk_count, threads, 0, l.stream>>>(l.args, r.sorted, r.chunks, int(t),
                                                             l.scratch_double->get());
    RP_CUDA_CHECK_LAUNCH("scheme5_chunks");
    scheme5_merge<<<(l.args.bins + 1 + 255) / 256, 256, 0, l.stream>>>(l.args, int(t), l.scratch_double->get(),
                                                                      r.bin_first_chunk, r.chunk_count);
    RP_CUDA_CHECK_LAUNCH("scheme5_merge");
  }
}

}  // namespace regpipe::cost_cr_cuda
