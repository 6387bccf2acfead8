#include "cuda_mi_cost.hpp"
#include "params.hpp"

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/voxel_map.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>
#include <regpipe_common_cuda/device_binning.hpp>

#include <algorithm>
#include <climits>
#include <iterator>
#include <map>

namespace regpipe::cost_mi_cuda {
namespace {

struct Scheme {
  void (*run)(const SchemeLaunch&);
  // nullptr for a scheme that keeps no histogram in shared memory (any bins fit)
  std::size_t (*shared_bytes)(int bins, int threads_per_block, std::size_t shared_per_block);
  const char* shared_layout;  // for the error when it does not fit
  std::unique_ptr<SchemeState> (*make_state)(const SchemeOptions&);  // nullptr: stateless
  // approximate: about one overlapping sample in threads_per_block is counted, so the
  // histogram's total is scaled back by threads_per_block for the reported overlap
  bool thinned;
  // partial_volume's shared memory, as shared_bytes; nullptr: the scheme counts whole samples
  // only and refuses partial_volume
  std::size_t (*pv_shared_bytes)(int bins, int threads_per_block, std::size_t shared_per_block) = nullptr;
};

const std::map<std::string, Scheme>& schemes() {
  static const std::map<std::string, Scheme> table = {
      {"privatised", {run_privatised, privatised_shared_bytes, "a bins x bins histogram of 16-bit counters per block", make_privatised_state, false, privatised_pv_shared_bytes}},
      {"per_warp", {run_per_warp, per_warp_shared_bytes, "a bins x bins histogram of 32-bit counters per warp", nullptr, false}},
      {"sort_and_count", {run_sort_and_count, nullptr, "", nullptr, false}},
      {"per_thread_packed", {run_per_thread_packed, per_thread_packed_shared_bytes, "a bins x bins histogram of counters of at least 2 bits per thread", nullptr, false}},
      {"presorted", {run_presorted, nullptr, "", make_presorted_state, false}},
      {"approximate", {run_approximate, approximate_shared_bytes, "a bins x bins histogram of 8-bit counters per block", nullptr, true}},
      {"adaptive", {run_adaptive, nullptr, "", make_adaptive_state, false}}};
  return table;
}

std::string scheme_names(bool partial_volume_only = false) {
  std::string names;
  for (const char* const* c = kSchemeChoices; *c != nullptr; ++c)
    if (!partial_volume_only || schemes().at(*c).pv_shared_bytes != nullptr)
      names += (names.empty() ? "" : ", ") + std::string(*c);
  return names;
}

int read_int(const rp::Params& params, const char* name) {
  return int(params.get_number(kParams, std::size(kParams), name));
}

}  // namespace

CudaMiCost::CudaMiCost(const rp::Params& params, bool normalised)
    : normalised_(normalised),
      cpu_alternative_(normalised ? "cpu.nmi" : "cpu.mi"),
      bins_(read_int(params, "bins")),
      threads_per_block_(read_int(params, "threads_per_block")),
      nearest_(params.get_string("interpolation") == "nearest"),
      partial_volume_(params.get_bool("partial_volume")) {
  if (threads_per_block_ % 32 != 0)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "threads_per_block=" + std::to_string(threads_per_block_) + " is not a multiple of 32");
  const std::string scheme = params.get_string("scheme");
  const auto it = schemes().find(scheme);
  if (it == schemes().end())
    throw rp::Error(RP_INVALID_ARGUMENT, "scheme=" + scheme + " is not a cuda.mi scheme (" + scheme_names() + ")");
  // Checked before the device is opened, so that they read the same on a machine without one.
  if (partial_volume_ && nearest_)  // as cpu.mi / cpu.nmi (cost_cpu's settings.cpp)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "partial_volume=true spreads each sample over its 8 trilinear neighbours and "
                    "cannot be combined with interpolation=nearest; use interpolation=trilinear");
  if (partial_volume_ && it->second.pv_shared_bytes == nullptr)
    throw rp::Error(RP_INVALID_ARGUMENT, "partial_volume=true is not supported by scheme=" + scheme +
                                             ", which counts whole samples; the schemes that support it: " +
                                             scheme_names(true) + " (or " + cpu_alternative_ + ")");
  scheme_ = it->second.run;
  thinned_ = it->second.thinned;
  reads_quads_ = scheme == "privatised" && !nearest_ && !partial_volume_;
  device_ = regpipe_common_cuda::select_device(read_int(params, "device"), cpu_alternative_);
  const auto shared_bytes = partial_volume_ ? it->second.pv_shared_bytes : it->second.shared_bytes;
  const std::string layout = partial_volume_ ? "a bins x bins histogram of 32-bit fixed-point counters per block "
                                               "(partial_volume=true)"
                                             : it->second.shared_layout;
  const auto fits = [&](int bins) { return shared_bytes == nullptr || shared_bytes(bins, threads_per_block_, device_.shared_per_block) > 0; };
  if (!fits(bins_)) {
    int most = bins_;
    while (most > 1 && !fits(most)) --most;
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "scheme=" + scheme + " keeps " + layout + " in shared memory: bins=" +
                        std::to_string(bins_) + " with threads_per_block=" + std::to_string(threads_per_block_) +
                        " does not fit in the " + std::to_string(device_.shared_per_block) + " bytes " + device_.name +
                        " allows a block (at most bins=" + std::to_string(most) + "); use fewer bins, " +
                        (partial_volume_ ? "partial_volume=false" : "privatised") + " or " + cpu_alternative_);
  }
  RP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  if (it->second.make_state != nullptr) {
    SchemeOptions o;
    o.threads_per_block = threads_per_block_;
    o.sm_count = device_.sm_count;
    o.shared_per_block = device_.shared_per_block;
    o.adaptive_refresh = read_int(params, "adaptive_refresh");
    state_ = it->second.make_state(o);
  }
}

CudaMiCost::~CudaMiCost() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

namespace {

const char* measure_name(bool normalised) {
  return normalised ? "normalised mutual information" : "mutual information";
}

// Voxels per slab of the reference's binning below which one thread beats a pool.
constexpr std::size_t kVoxelsPerSlab = std::size_t(1) << 20;
constexpr std::size_t kMaxSlabs = 64;

}  // namespace

// Validation and binning exactly as cpu.mi / cpu.nmi (measure_image_in_place checks and
// measures as prepare_image does, bit for bit), without copying the image; the GPU counts
// unweighted samples only.
CudaMiCost::Geometry CudaMiCost::measure(const rp_image& image, const rp_image* weight, const char* role) const {
  if (weight != nullptr)
    throw rp::Error(RP_UNSUPPORTED, std::string("cuda.mi and cuda.nmi count unweighted samples: the ") + role +
                                        " weight image needs " + cpu_alternative_);
  return geometry_of(regpipe_common::measure_image_in_place(image, nullptr, role), role);
}

// The same checks and range of an image in device memory, scanned there.
CudaMiCost::Geometry CudaMiCost::measure_on_device(const rp_device_image& image, const char* role) {
  regpipe_common_cuda::require_on_device(image, device_.index, role);
  return geometry_of(regpipe_common_cuda::measure_device_image(image, role, stream_, measure_scratch_).image, role);
}

CudaMiCost::Geometry CudaMiCost::geometry_of(const regpipe_common::MeasuredImage& m, const char* role) const {
  regpipe_common::require_varying(m, role, measure_name(normalised_));
  if (m.voxel_count > std::size_t(INT_MAX))
    throw rp::Error(RP_UNSUPPORTED, std::string("the ") + role + " image has " + std::to_string(m.voxel_count) +
                                        " voxels; the GPU counts at most " + std::to_string(INT_MAX) + ": use " +
                                        cpu_alternative_);
  Geometry g;
  g.grid = m.grid;
  std::copy(m.voxel_to_world, m.voxel_to_world + 16, g.voxel_to_world);
  g.binning = regpipe_common::make_binning(m.min_value, m.max_value, bins_, role);
  g.voxel_count = m.voxel_count;
  return g;
}

void CudaMiCost::set_reference(const rp_image& image, const rp_image* weight) {
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  ref_.reset();  // until this call's uploads are done
  const Geometry ref = measure(image, weight, "reference");
  regpipe_common_cuda::require_device_memory(ref.voxel_count * sizeof(uint16_t), "the reference image", device_);
  // Each voxel's bin (bins <= 1024), in parallel slabs: the binning is per voxel, so the
  // result does not depend on the slabs.
  ref_bins_host_.resize(ref.voxel_count);
  const std::size_t slabs = std::clamp<std::size_t>(ref.voxel_count / kVoxelsPerSlab, 1, kMaxSlabs);
  regpipe_common::parallel_slabs(slabs, [&](std::size_t s) {
    const std::size_t end = regpipe_common::slab_begin(ref.voxel_count, slabs, s + 1);
    for (std::size_t i = regpipe_common::slab_begin(ref.voxel_count, slabs, s); i < end; ++i)
      ref_bins_host_[i] = uint16_t(ref.binning.bin(image.data[i]));
  });
  ref_bins_.upload(ref_bins_host_, stream_);
  ++counts_.uploads;
  counts_.upload_bytes += ref.voxel_count * sizeof(uint16_t);
  if (state_) state_->reference_changed(ref_bins_host_, bins_, stream_);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  ref_ = ref;
}

void CudaMiCost::set_reference_device(const rp_device_image& image) {
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  ref_.reset();  // until this call's work is done
  const Geometry ref = measure_on_device(image, "reference");
  regpipe_common_cuda::require_device_memory(ref.voxel_count * sizeof(uint16_t), "the reference image", device_);
  ref_bins_.ensure(ref.voxel_count);
  regpipe_common_cuda::launch_bin_voxels(image.data, ref.voxel_count, ref.binning, ref_bins_.get(), stream_);
  if (state_ && state_->built_from_reference_bins()) {  // presorted, adaptive
    ref_bins_host_.resize(ref.voxel_count);
    RP_CUDA_CHECK(cudaMemcpyAsync(ref_bins_host_.data(), ref_bins_.get(), ref.voxel_count * sizeof(uint16_t),
                                  cudaMemcpyDeviceToHost, stream_));
    RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    ++counts_.downloads;
    counts_.download_bytes += ref.voxel_count * sizeof(uint16_t);
    state_->reference_changed(ref_bins_host_, bins_, stream_);
  }
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  ref_ = ref;
}

void CudaMiCost::set_moving(const rp_image& image, const rp_image* weight) {
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  mov_.reset();  // until this call's upload is done
  take_moving(measure(image, weight, "moving"), image.data, cudaMemcpyHostToDevice);
}

void CudaMiCost::set_moving_device(const rp_device_image& image) {
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  mov_.reset();  // until this call's copy is done
  take_moving(measure_on_device(image, "moving"), image.data, cudaMemcpyDeviceToDevice);
}

void CudaMiCost::take_moving(const Geometry& mov, const float* values, cudaMemcpyKind from) {
  const std::size_t bytes = mov.voxel_count * sizeof(float);
  regpipe_common_cuda::require_device_memory(bytes, "the moving image", device_);
  mov_values_.ensure(mov.voxel_count);
  mov_quads_.invalidate();
  // From host memory, read in place from the caller's.
  RP_CUDA_CHECK(cudaMemcpyAsync(mov_values_.get(), values, bytes, from, stream_));
  if (from == cudaMemcpyHostToDevice) {
    ++counts_.uploads;
    counts_.upload_bytes += bytes;
  }
  if (state_) state_->moving_changed();
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  mov_ = mov;
}

void CudaMiCost::evaluate(const rp_cost_request& request) {
  if (!ref_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a reference image: call set_reference first");
  if (!mov_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a moving image: call set_moving first");
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  const std::size_t k = request.k;
  if (k == 0) return;
  host_maps_.ensure(12 * k);
  for (std::size_t t = 0; t < k; ++t) {
    const double* matrix = request.matrices + 16 * t;
    regpipe_common::check_affine(matrix, "transform " + std::to_string(t) + " of " + std::to_string(k) +
                                             " (reference world -> moving world)");
    regpipe_common::VoxelMap map;
    regpipe_common::make_voxel_map(ref_->voxel_to_world, matrix, mov_->voxel_to_world, &map);
    std::copy(map.m, map.m + 12, host_maps_.get() + 12 * t);
  }
  const std::size_t entries = std::size_t(bins_) * std::size_t(bins_);
  maps_.ensure(12 * k);
  if (partial_volume_)
    joint_pv_.ensure(k * entries);
  else
    joint_.ensure(k * entries);
  partials_.ensure(finish_partials_size(k, bins_));
  host_out_.ensure(2 * k);
  RP_CUDA_CHECK(cudaMemcpyAsync(maps_.get(), host_maps_.get(), 12 * k * sizeof(double), cudaMemcpyHostToDevice,
                                stream_));
  if (partial_volume_)
    RP_CUDA_CHECK(cudaMemsetAsync(joint_pv_.get(), 0, k * entries * sizeof(unsigned long long), stream_));
  else
    RP_CUDA_CHECK(cudaMemsetAsync(joint_.get(), 0, k * entries * sizeof(unsigned), stream_));

  SchemeLaunch l;
  MiArgs& a = l.args;
  a.ref_grid = ref_->grid;
  a.ref_bins = ref_bins_.get();
  a.mov_grid = mov_->grid;
  a.mov = mov_values_.get();
  a.mov_quads = reads_quads_ ? mov_quads_.for_call(k, a.mov, mov_->grid, device_.l2_bytes, stream_) : nullptr;
  a.mov_lo = mov_->binning.lo;
  a.mov_inv_width = mov_->binning.inv_width;
  a.nearest = nearest_ ? 1 : 0;
  a.bins = bins_;
  a.maps = maps_.get();
  a.joint = partial_volume_ ? nullptr : joint_.get();
  a.joint_pv = partial_volume_ ? joint_pv_.get() : nullptr;
  l.k = k;
  l.voxel_count = uint32_t(ref_->voxel_count);
  l.threads_per_block = threads_per_block_;
  l.sm_count = device_.sm_count;
  l.shared_per_block = device_.shared_per_block;
  l.stream = stream_;
  l.scratch = &scheme_scratch_;
  l.state = state_.get();
  scheme_(l);
  double* out = host_out_.device_view();
  finish_entropies(l, normalised_, partials_.get(), out, out + k);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the one sync of an evaluation
  if (state_) state_->evaluated(l);

  const double* costs = host_out_.get();
  const double* overlaps = costs + k;
  std::copy(costs, costs + k, request.costs_out);
  double* overlap_out = RP_HAS_MEMBER(&request, rp_cost_request, overlap_out) ? request.overlap_out : nullptr;
  if (overlap_out != nullptr)
    for (std::size_t t = 0; t < k; ++t)
      overlap_out[t] = std::min(1.0, overlaps[t] * (thinned_ ? double(threads_per_block_) : 1.0) /
                                         double(ref_->voxel_count));
}

}  // namespace regpipe::cost_mi_cuda
