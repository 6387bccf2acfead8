// The joint-histogram schemes. Each counts, for every one of the k transforms, the samples of
// the reference voxels that map inside the moving image into the zeroed k * bins * bins
// counts (MiArgs::joint); finish_entropies then turns each histogram into its cost.
#pragma once

#include "mi_args.hpp"

#include <regpipe_common_cuda/device_buffer.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace regpipe::cost_mi_cuda {

struct SchemeLaunch;

// What a scheme keeps across the calls of one instance (presorted: the reference sorted by
// bin; adaptive: its histogram configuration; privatised: its launch plans). Stateless schemes
// have none.
class SchemeState {
 public:
  virtual ~SchemeState() = default;
  // Whether the state is made from the reference's bins on the host (reference_changed): for
  // such a state set_reference_device downloads them. privatised's plans are not.
  virtual bool built_from_reference_bins() const { return true; }
  // From set_reference: the reference's bins (x fastest), before any evaluation on it. Uploads
  // go to `stream`, which set_reference synchronises afterwards.
  virtual void reference_changed(const std::vector<uint16_t>& /*ref_bins*/, int /*bins*/, cudaStream_t /*stream*/) {}
  // From set_moving.
  virtual void moving_changed() {}
  // After the evaluation's one synchronisation: what the scheme copied back is on the host.
  virtual void evaluated(const SchemeLaunch& /*l*/) {}
};

// Scheme settings that are not part of every launch.
struct SchemeOptions {
  int threads_per_block = 256;
  int sm_count = 1;
  std::size_t shared_per_block = 48 * 1024;
  int adaptive_refresh = 0;  // adaptive: evaluate calls between configurations (0: only when an image changes)
};

struct SchemeLaunch {
  MiArgs args;
  std::size_t k = 1;
  uint32_t voxel_count = 0;  // the reference grid's
  int threads_per_block = 256;
  int sm_count = 1;
  std::size_t shared_per_block = 48 * 1024;  // the device's opt-in maximum
  cudaStream_t stream = nullptr;
  // The instance's global-memory workspace for schemes that need one (sort_and_count's keys,
  // runs and CUB temp storage), grown on demand and kept across evaluations.
  regpipe_common_cuda::DeviceBuffer<unsigned char>* scratch = nullptr;
  SchemeState* state = nullptr;  // the scheme's, for schemes that keep one
};

// Ours: each block counts ranges of reference voxels under one transform at a time into a
// private bins x bins histogram in shared memory (32-bit counters, or two 16-bit ones a word
// when that is what fits), a run of neighbouring lanes that share a joint bin adding once; the
// moving image's trilinear quads where MiArgs::mov_quads is set. With MiArgs::joint_pv set,
// partial-volume interpolation into 32-bit fixed-point counters. Its state: the launch plans.
void run_privatised(const SchemeLaunch& l);
std::unique_ptr<SchemeState> make_privatised_state(const SchemeOptions& o);
// Shams & Kennedy 2007 method 1: a bins x bins histogram of 32-bit counters per warp.
void run_per_warp(const SchemeLaunch& l);
// Shams et al. 2010 method 3: per transform, the joint bins radix-sorted (CUB, in place of the
// paper's bitonic sort) and run-length counted; no atomics, no shared-memory histogram.
void run_sort_and_count(const SchemeLaunch& l);
// Shams & Kennedy 2007 method 2: per-thread histograms of packed narrow counters in shared
// memory, a counter's overflow flushed to the global histogram.
void run_per_thread_packed(const SchemeLaunch& l);
// Chen et al. 2009 / Vetter & Westermann 2011: the reference sorted by bin once per
// set_reference (SchemeState), blocks own segments of one reference bin (a row), rows summed
// without atomics.
void run_presorted(const SchemeLaunch& l);
std::unique_ptr<SchemeState> make_presorted_state(const SchemeOptions& o);
// Shams & Barnes 2007: approximate. Thread t of a block owns a range of joint bins and counts
// only the samples at its positions whose bin falls in it (about one sample in
// threads_per_block), in 8-bit counters flushed on overflow.
void run_approximate(const SchemeLaunch& l);
// Brosch & Tam 2009: the shared-memory layout of each joint bin (none, or 1..32 replicated
// counters) optimised from a previous histogram, reused, recomputed when an image changes or
// every adaptive_refresh evaluations.
void run_adaptive(const SchemeLaunch& l);
std::unique_ptr<SchemeState> make_adaptive_state(const SchemeOptions& o);

// The shared memory per block each scheme needs, 0 when it exceeds `shared_per_block`.
std::size_t privatised_shared_bytes(int bins, int threads_per_block, std::size_t shared_per_block);
// privatised with partial_volume: bins x bins 32-bit fixed-point counters.
std::size_t privatised_pv_shared_bytes(int bins, int threads_per_block, std::size_t shared_per_block);
std::size_t per_warp_shared_bytes(int bins, int threads_per_block, std::size_t shared_per_block);
std::size_t per_thread_packed_shared_bytes(int bins, int threads_per_block, std::size_t shared_per_block);
std::size_t approximate_shared_bytes(int bins, int threads_per_block, std::size_t shared_per_block);

// The k costs from the k joint histograms: -MI, or -NMI when `normalised`, and the overlap
// (total count) of each, written to costs_out[0, k) and overlaps_out[0, k) (page-locked host
// memory the device writes). Parallel over rows and transforms; fixed summation order.
// `partials` holds finish_partials_size(k, bins) doubles.
std::size_t finish_partials_size(std::size_t k, int bins);
void finish_entropies(const SchemeLaunch& l, bool normalised, double* partials, double* costs_out,
                      double* overlaps_out);

}  // namespace regpipe::cost_mi_cuda
