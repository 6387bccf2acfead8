// The moving image as trilinear quads, for the GPU costs that sample it many times a call:
// quads[i] = (v[i], v[i + dx], v[i + dy], v[i + dy + dx]), the x and y neighbours of voxel i
// with trilinear's edge clamps, so a sample reads two 16-byte quads (slices z and z + 1) with
// trilinear_quads (trilinear_32.cuh) instead of eight floats: the same values, so the same
// costs. cuda.cr's fused and cuda.mi's privatised read them.
#pragma once

#include "regpipe_common_cuda/device_buffer.hpp"

#include <regpipe_common/voxel_map.hpp>

#include <cuda_runtime.h>

#include <cstddef>

namespace regpipe_common_cuda {

// Whether a call of k transforms on a moving image of `voxels` reads the quads (else the
// floats). The quads hold four times the bytes of the floats: a batch of at least 4 reads them
// from L2 (the costs run the blocks of one reference range for every transform together, so
// its neighbourhood is fetched from memory once a batch), and so does any call when they fit in
// half of L2; a call reading them from memory for each transform is faster with the floats
// (H100, cuda.cr at 1 mm: k=1 100 us with the floats, 148 with the quads; the two even at k=4:
// bench/results/cost_cr.md).
inline bool reads_trilinear_quads(std::size_t k, std::size_t voxels, std::size_t l2_bytes) {
  constexpr std::size_t kQuadBatch = 4;
  return k >= kQuadBatch || 2 * voxels * sizeof(float4) <= l2_bytes;
}

// Queues the quads of `values` (as many as its voxels) on `stream`.
void make_trilinear_quads(const float* values, const regpipe_common::Grid& grid, float4* quads, cudaStream_t stream);

// Loads make_trilinear_quads's kernel now rather than at its first call (kernel_loading.hpp).
void load_trilinear_quads_kernel();

// One moving image's quads, made on the first call that reads them, so that a level evaluated
// only by small calls on a large image (a registration's 1 mm pass) never pays for them.
class TrilinearQuads {
 public:
  // The moving image changed: its quads are made again when a call reads them.
  void invalidate() { ready_ = false; }
  // The quads for a call of k transforms on `values` (the current moving image), queued on
  // `stream`; nullptr when that call reads the floats, or when the device has no room for them.
  const float4* for_call(std::size_t k, const float* values, const regpipe_common::Grid& grid, std::size_t l2_bytes,
                         cudaStream_t stream);

 private:
  DeviceBuffer<float4> quads_;
  bool ready_ = false;  // quads_ holds the current moving image's quads
};

}  // namespace regpipe_common_cuda
