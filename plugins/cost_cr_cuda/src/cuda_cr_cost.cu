#include "cuda_cr_cost.hpp"
#include "params.hpp"
#include "reference_spans.hpp"

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/border_weight.hpp>
#include <regpipe_common/head_weight.hpp>
#include <regpipe_common/voxel_map.hpp>
#include <regpipe_common_cuda/device_binning.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <iterator>
#include <future>
#include <map>

namespace regpipe::cost_cr_cuda {
namespace {

using regpipe_common::MeasuredImage;
using regpipe_common::PreparedImage;

const std::map<std::string, CudaCrCost::Scheme>& schemes() {
  static const std::map<std::string, CudaCrCost::Scheme> table = {
      {"fused", {run_fused, true}},       {"scheme1", {run_scheme1, false}}, {"scheme2", {run_scheme2, false}},
      {"scheme3a", {run_scheme3a, false}}, {"scheme3b", {run_scheme3b, false}}, {"scheme4", {run_scheme4, false}},
      {"scheme5", {run_scheme5, false}}};
  return table;
}

int read_int(const rp::Params& params, const char* name) {
  return int(params.get_number(kParams, std::size(kParams), name));
}

// The kernels index voxels with 32-bit integers.
void check_voxel_count(std::size_t voxels, const char* role) {
  if (voxels > std::size_t(INT_MAX))
    throw rp::Error(RP_UNSUPPORTED, std::string("the ") + role + " image has " + std::to_string(voxels) +
                                        " voxels; cuda.cr indexes at most " + std::to_string(INT_MAX) +
                                        " (32-bit): use cpu.cr, the CPU reference");
}

// The largest |value - mean| of a moving image whose values span `range`: the bound of fused's
// fixed-point sums. Interpolation stays within the voxel values and weights, including those of
// voxels with weight 0; |v - mean| is largest at an extreme value (rounding is monotonic), so
// the extremes give the bound of every voxel bit for bit.
double deviation(const std::pair<float, float>& range, double mean) {
  return std::max(std::fabs(double(range.second) - mean), std::fabs(double(range.first) - mean));
}

// Transforms a call may carry without growing the page-locked maps and results allocated when
// the instance is created (optim.flirt's largest call, the 8 mm fine grid, has 1331).
constexpr std::size_t kPreparedTransforms = 2048;

// Voxels below which set_moving sums the mean after the copy rather than on a thread beside it.
constexpr std::size_t kVoxelsForAThread = std::size_t(1) << 18;

template <class Image>
CudaCrCost::Geometry geometry_of(const Image& image, bool weighted) {
  CudaCrCost::Geometry g;
  g.grid = image.grid;
  std::copy(image.voxel_to_world, image.voxel_to_world + 16, g.voxel_to_world);
  std::copy(image.spacing_mm, image.spacing_mm + 3, g.spacing_mm);
  g.weighted = weighted;
  return g;
}

// The power of two that maps `bound` to at most 2^30, so that a float product up to the bound
// (and its rounding) converts to a 32-bit integer. At most 2^119, so that the kernel's float
// copy of the scale is finite (a bound below 2^-89 loses resolution).
double fixed_point_scale(double bound) {
  if (!(bound > 0.0) || !std::isfinite(bound)) return 1.0;
  int exponent = 0;
  std::frexp(bound, &exponent);  // bound < 2^exponent
  return std::ldexp(1.0, 30 - std::max(exponent, -89));
}

}  // namespace

CudaCrCost::CudaCrCost(const rp_host*, const rp::Params& params)
    : bins_(read_int(params, "bins")),
      threads_per_block_(read_int(params, "threads_per_block")),
      blocks_(read_int(params, "blocks")),
      max_block_workload_(read_int(params, "max_block_workload")),
      nearest_(params.get_string("interpolation") == "nearest"),
      border_mm_(params.get_number(kParams, std::size(kParams), "border_mm")),
      head_weight_mm_(params.get_number(kParams, std::size(kParams), "head_weight_mm")) {
  if (threads_per_block_ % 32 != 0)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "threads_per_block=" + std::to_string(threads_per_block_) + " is not a multiple of 32");
  scheme_name_ = params.get_string("scheme");
  const auto it = schemes().find(scheme_name_);
  if (it == schemes().end())
    throw rp::Error(RP_INVALID_ARGUMENT, "scheme=" + scheme_name_ + " is not a cuda.cr scheme");
  scheme_ = it->second;
  device_ = regpipe_common_cuda::select_device(read_int(params, "device"), "cpu.cr");
  if (scheme_name_ == "scheme4" && per_warp_histogram_bytes(threads_per_block_, bins_) > device_.shared_per_block)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    scheme_name_ + " with threads_per_block=" + std::to_string(threads_per_block_) + " and bins=" +
                        std::to_string(bins_) + " needs " +
                        std::to_string(per_warp_histogram_bytes(threads_per_block_, bins_)) +
                        " bytes of shared memory per block (a histogram per warp); " + device_.name + " allows " +
                        std::to_string(device_.shared_per_block) + ": use fewer threads per block or bins");
  RP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  try {
    prepare_fused_calls();
  } catch (...) {  // no destructor runs for a constructor that throws
    cudaStreamDestroy(stream_);
    throw;
  }
}

// fused's kernels loaded and the buffers of calls of up to kPreparedTransforms allocated now,
// which a registration's first set-up and calls would otherwise wait for (regrowing them as
// its calls grow: page-locked allocations and frees): `regpipe run` creates the components
// while it reads the images.
void CudaCrCost::prepare_fused_calls() {
  if (scheme_name_ != "fused") return;
  load_fused_kernels();
  regpipe_common_cuda::load_measure_kernels();
  regpipe_common_cuda::load_binning_kernels();
  if (!nearest_) regpipe_common_cuda::load_trilinear_quads_kernel();
  host_maps_.ensure(12 * kPreparedTransforms);
  host_out_.ensure(2 * kPreparedTransforms);
  maps_.ensure(12 * kPreparedTransforms);
  ensure_results(kPreparedTransforms);
  signal_.prepare(stream_);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

CudaCrCost::~CudaCrCost() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void CudaCrCost::check_device_memory(std::size_t bytes, const char* what) const {
  std::size_t free_bytes = 0, total_bytes = 0;
  RP_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes)
    throw rp::Error(RP_OUT_OF_MEMORY, std::string(what) + " needs " + std::to_string(bytes >> 20) +
                                          " MiB of device memory; " + device_.name + " has " +
                                          std::to_string(free_bytes >> 20) + " MiB free");
}

void CudaCrCost::set_reference(const rp_image& image, const rp_image* weight) {
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  ref_.reset();  // until this call's uploads are done
  layouts_ = ReferenceLayouts{};
  const auto head = regpipe_common::head_weighted(image, weight, head_weight_mm_, "reference");
  if (head) weight = &head->weight;
  const Geometry geometry = scheme_name_ == "fused" ? set_fused_reference(image, weight)
                                                    : set_gridded_reference(image, weight);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  ref_ = geometry;
}

// The checks of a reference for fused, wherever its voxels are, and its bins.
regpipe_common::IntensityBinning CudaCrCost::fused_binning(const MeasuredImage& ref) const {
  regpipe_common::require_varying(ref, "reference", "correlation ratio");
  check_voxel_count(ref.voxel_count, "reference");
  // At most 16 bytes a voxel whichever the scheme (bins, weights, sort keys and indices).
  check_device_memory(ref.voxel_count * 16, "the reference image");
  if (uint32_t(ref.grid.nx) > kMaxBlockSamples)
    throw rp::Error(RP_UNSUPPORTED, "fused: the reference has rows of " + std::to_string(ref.grid.nx) +
                                        " voxels, more than its " + std::to_string(kMaxBlockSamples) +
                                        "-voxel limit; use scheme5 or cpu.cr");
  return regpipe_common::make_binning(ref.min_value, ref.max_value, bins_, "reference");
}

// fused needs only the spans (bins and weights of the weighted voxels) and the total weight:
// the image is read in place, never copied whole.
CudaCrCost::Geometry CudaCrCost::set_fused_reference(const rp_image& image, const rp_image* weight) {
  const MeasuredImage ref = regpipe_common::measure_image_in_place(image, weight, "reference");
  const regpipe_common::IntensityBinning binning = fused_binning(ref);
  const ReferenceSpans spans = make_reference_spans(ref, binning);
  ref_total_weight_ = ref.total_weight;
  ref_weight_max_ = double(ref.max_weight);
  prepare_fused(spans, threads_per_block_, bins_, stream_, fused_, layouts_.fused);
  counts_.uploads += 1;
  counts_.upload_bytes += spans.spans.size() * sizeof(Span) + spans.bins.size() * sizeof(uint16_t) +
                          spans.weights.size() * sizeof(float);
  layouts_.voxel_count = uint32_t(ref.voxel_count);
  return geometry_of(ref, ref.weights != nullptr);
}

// An unweighted reference in device memory. fused: measured, binned and laid out on the device
// (its spans are its rows), the host path's bins, hot bin and total weight bit for bit. Schemes
// 1-5 build their per-voxel state (and scheme5 its presort) on the host, as head_weight_mm
// derives its weights: the level is copied back once and takes the host path.
void CudaCrCost::set_reference_device(const rp_device_image& image) {
  regpipe_common_cuda::require_on_device(image, device_.index, "reference");
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  if (scheme_name_ != "fused" || head_weight_mm_ > 0.0) {
    const HostCopy copy = copy_to_host(image.data, image.dims, image.voxel_to_world);
    set_reference(copy.view, nullptr);
    return;
  }
  ref_.reset();  // until this call's layout is done
  layouts_ = ReferenceLayouts{};
  const regpipe_common_cuda::DeviceMeasurement measured =
      regpipe_common_cuda::measure_device_image(image, "reference", stream_, measure_scratch_);
  const MeasuredImage& ref = measured.image;
  const regpipe_common::IntensityBinning binning = fused_binning(ref);
  prepare_fused_from_device(image.data, ref.grid, binning, threads_per_block_, stream_, fused_, layouts_.fused);
  ref_total_weight_ = ref.total_weight;
  ref_weight_max_ = 1.0;
  layouts_.voxel_count = uint32_t(ref.voxel_count);
  ref_ = geometry_of(ref, false);
}

// Schemes 1-5 map every voxel of the grid: its bins and weights uploaded whole.
CudaCrCost::Geometry CudaCrCost::set_gridded_reference(const rp_image& image, const rp_image* weight) {
  PreparedImage ref = regpipe_common::prepare_image(image, weight, "reference");
  regpipe_common::require_varying(ref, "reference", "correlation ratio");
  check_voxel_count(ref.voxel_count(), "reference");
  regpipe_common::bin_voxels(ref, bins_, "reference");
  const std::size_t n = ref.voxel_count();
  // At most 16 bytes a voxel whichever the scheme (bins, weights, sort keys and indices).
  check_device_memory(n * 16, "the reference image");

  // The total weight in the same x-fastest order as cost_cpu, for the overlap fraction; the
  // weighted voxels for scheme5's sort.
  std::vector<uint32_t> active;
  ref_total_weight_ = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(ref.weight(i) > 0.f)) continue;
    ref_total_weight_ += ref.weight(i);
    if (scheme_name_ == "scheme5") active.push_back(uint32_t(i));
  }
  layouts_.voxel_count = uint32_t(n);
  ref_bins_.upload(ref.voxel_bins, stream_);
  if (!ref.weights.empty()) ref_weight_.upload(ref.weights, stream_);
  ++counts_.uploads;
  counts_.upload_bytes += n * (sizeof(int32_t) + (ref.weights.empty() ? 0 : sizeof(float)));
  if (scheme_name_ == "scheme5")
    presort_reference(ref.voxel_bins.data(), active, bins_, max_block_workload_, stream_, presort_, layouts_);
  return geometry_of(ref, !ref.weights.empty());
}

void CudaCrCost::set_moving(const rp_image& image, const rp_image* weight) {
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  mov_.reset();  // until this call's uploads are done
  mov_quads_.invalidate();
  const auto head = regpipe_common::head_weighted(image, weight, head_weight_mm_, "moving");
  if (head) weight = &head->weight;
  const MeasuredImage mov = regpipe_common::measure_image_in_place(image, weight, "moving");
  regpipe_common::require_varying(mov, "moving", "correlation ratio");
  check_voxel_count(mov.voxel_count, "moving");
  check_device_memory(mov.voxel_count * 2 * sizeof(float), "the moving image");
  // The mean, a serial sum, beside the copies from the caller's memory (small levels: after,
  // a thread would cost more than it saves).
  const auto policy = mov.voxel_count < kVoxelsForAThread ? std::launch::deferred : std::launch::async;
  std::future<double> mean = std::async(policy, regpipe_common::weighted_mean, std::cref(mov));
  mov_values_.upload(mov.values, mov.voxel_count, stream_);
  count_upload(mov.voxel_count);
  if (mov.weights != nullptr) {
    mov_weight_.upload(mov.weights, mov.voxel_count, stream_);
    count_upload(mov.voxel_count);
  }
  Geometry geometry = geometry_of(mov, mov.weights != nullptr);
  geometry.mean = mean.get();
  mov_range_ = {mov.min_all, mov.max_all};
  mov_deviation_lo_ = mov_deviation_max_ = deviation(mov_range_, geometry.mean);
  mov_weight_max_ = double(mov.max_weight);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  mov_ = geometry;
}

// Only a sum in the serial order gives the host path's mean bit for bit, so the device's sum
// (another order) bounds it: when every mean within the bound has one float (the kernels'
// shift) the device's does; the fixed-point scales, which need the reference too, are checked
// at evaluate. Where the bound straddles a float (a few percent of images), the mean comes
// from a host copy (settle_moving_mean).
void CudaCrCost::set_moving_device(const rp_device_image& image) {
  regpipe_common_cuda::require_on_device(image, device_.index, "moving");
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  if (head_weight_mm_ > 0.0) {  // the weights are derived on the host
    const HostCopy copy = copy_to_host(image.data, image.dims, image.voxel_to_world);
    set_moving(copy.view, nullptr);
    return;
  }
  mov_.reset();  // until this call's copy is done
  mov_quads_.invalidate();
  const regpipe_common_cuda::DeviceMeasurement measured =
      regpipe_common_cuda::measure_device_image(image, "moving", stream_, measure_scratch_);
  const MeasuredImage& mov = measured.image;
  regpipe_common::require_varying(mov, "moving", "correlation ratio");
  check_voxel_count(mov.voxel_count, "moving");
  check_device_memory(mov.voxel_count * sizeof(float), "the moving image");
  mov_values_.ensure(mov.voxel_count);
  RP_CUDA_CHECK(cudaMemcpyAsync(mov_values_.get(), image.data, mov.voxel_count * sizeof(float),
                                cudaMemcpyDeviceToDevice, stream_));
  Geometry geometry = geometry_of(mov, false);
  mov_range_ = {mov.min_all, mov.max_all};
  mov_weight_max_ = 1.0;
  const regpipe_common::MeanBounds mean = regpipe_common::serial_mean_bounds(measured.sum, measured.abs_sum, mov.voxel_count);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // Inside the range, |max - m| falls and |m - min| grows with m (rounding is monotonic).
  if (float(mean.lo) == float(mean.hi) && mean.lo >= double(mov.min_all) && mean.hi <= double(mov.max_all)) {
    geometry.mean = mean.lo;
    mov_deviation_lo_ = std::max(double(mov.max_all) - mean.hi, mean.lo - double(mov.min_all));
    mov_deviation_max_ = std::max(double(mov.max_all) - mean.lo, mean.hi - double(mov.min_all));
  } else {
    settle_moving_mean(geometry);
  }
  mov_ = geometry;
}

CudaCrCost::HostCopy CudaCrCost::copy_to_host(const float* data, const uint32_t dims[3],
                                              const double voxel_to_world[16]) {
  HostCopy copy;
  const std::size_t count = std::size_t(dims[0]) * dims[1] * dims[2];
  copy.values.resize(count);
  RP_CUDA_CHECK(cudaMemcpyAsync(copy.values.data(), data, count * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  ++counts_.downloads;
  counts_.download_bytes += count * sizeof(float);
  copy.view = regpipe_common::image_view(dims, voxel_to_world, copy.values.data());
  return copy;
}

void CudaCrCost::settle_moving_mean(Geometry& geometry) {
  const uint32_t dims[3] = {uint32_t(geometry.grid.nx), uint32_t(geometry.grid.ny), uint32_t(geometry.grid.nz)};
  const HostCopy copy = copy_to_host(mov_values_.get(), dims, geometry.voxel_to_world);
  geometry.mean = regpipe_common::weighted_mean(regpipe_common::measure_image_in_place(copy.view, nullptr, "moving"));
  mov_deviation_lo_ = mov_deviation_max_ = deviation(mov_range_, geometry.mean);
}

FixedPointScales CudaCrCost::scales_for(double deviation) const {
  // A sample's weight is at most the largest reference weight times the largest moving weight
  // (border <= 1), and |y| at most the largest deviation from the moving mean.
  const double w = ref_weight_max_ * mov_weight_max_;
  FixedPointScales s;
  s.w = fixed_point_scale(w);
  s.wy = fixed_point_scale(w * deviation);
  s.wyy = fixed_point_scale(w * deviation * deviation);
  s.overlap = s.w;  // the overlap weight w_ref * w_mov has the sample weight's bound
  s.w_f = float(s.w);
  s.wy_f = float(s.wy);
  s.wyy_f = float(s.wyy);
  s.w_one = std::llrint(s.w);
  return s;
}

FixedPointScales CudaCrCost::fixed_point_scales() {
  // A deviation known within bounds (set_moving_device) fixes the scales when both bounds give
  // the same ones (a scale is monotonic in it); else the mean is settled exactly.
  if (mov_deviation_lo_ != mov_deviation_max_) {
    const FixedPointScales lo = scales_for(mov_deviation_lo_), hi = scales_for(mov_deviation_max_);
    if (lo.wy != hi.wy || lo.wyy != hi.wyy) settle_moving_mean(*mov_);
  }
  const FixedPointScales s = scales_for(mov_deviation_max_);
  if (!(s.w_f > 0.f && s.wy_f > 0.f && s.wyy_f > 0.f))  // a power of two below float's range
    throw rp::Error(RP_UNSUPPORTED, "fused: moving intensities deviating up to " + std::to_string(mov_deviation_max_) +
                                        " from their mean are outside its fixed-point range; use scheme5 or cpu.cr");
  return s;
}

void CudaCrCost::ensure_results(std::size_t k) {
  if (k <= results_capacity_ && results_zero_) return;
  results_capacity_ = std::max(results_capacity_, k);
  const std::size_t doubles = results_capacity_ * (std::size_t(bins_) * kSumsPerBin + 1);
  results_.ensure(doubles);
  tickets_.ensure(results_capacity_);
  RP_CUDA_CHECK(cudaMemsetAsync(results_.get(), 0, doubles * sizeof(double), stream_));
  RP_CUDA_CHECK(cudaMemsetAsync(tickets_.get(), 0, results_capacity_ * sizeof(unsigned), stream_));
  results_zero_ = true;
}

void CudaCrCost::evaluate(const rp_cost_request& request) {
  if (!ref_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a reference image: call set_reference first");
  if (!mov_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a moving image: call set_moving first");
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  const std::size_t k = request.k;
  const std::size_t entries = std::size_t(bins_) * kSumsPerBin;
  host_maps_.ensure(12 * k);
  for (std::size_t t = 0; t < k; ++t) {
    const double* matrix = request.matrices + 16 * t;
    regpipe_common::check_affine(matrix, "transform " + std::to_string(t) + " of " + std::to_string(k) +
                                             " (reference world -> moving world)");
    regpipe_common::VoxelMap map;
    regpipe_common::make_voxel_map(ref_->voxel_to_world, matrix, mov_->voxel_to_world, &map);
    std::copy(map.m, map.m + 12, host_maps_.get() + 12 * t);
  }
  // fused takes a small call's maps in its launch parameters; otherwise one copy to the device
  // (read in place from host memory, the maps would cost every block of a batch a PCIe round
  // trip).
  const bool inline_maps = scheme_.finishes_itself && k <= kFusedInlineMaps;
  if (!inline_maps) {
    maps_.ensure(12 * k);
    RP_CUDA_CHECK(cudaMemcpyAsync(maps_.get(), host_maps_.get(), 12 * k * sizeof(double), cudaMemcpyHostToDevice,
                                  stream_));
  }
  ensure_results(k);
  results_zero_ = false;  // until this call's finish step has run
  host_out_.ensure(2 * k);

  SchemeLaunch l;
  CrArgs& a = l.args;
  a.ref_grid = ref_->grid;
  a.ref_bins = ref_bins_.get();
  a.ref_weight = ref_->weighted ? ref_weight_.get() : nullptr;
  a.mov_grid = mov_->grid;
  a.mov_last = make_float3(float(a.mov_grid.nx - 1), float(a.mov_grid.ny - 1), float(a.mov_grid.nz - 1));
  a.mov = mov_values_.get();
  a.mov_weight = mov_->weighted ? mov_weight_.get() : nullptr;
  a.mov_quads = scheme_name_ == "fused" && !nearest_
                    ? mov_quads_.for_call(k, mov_values_.get(), mov_->grid, device_.l2_bytes, stream_)
                    : nullptr;
  a.mov_shift = float(mov_->mean);
  a.nearest = nearest_ ? 1 : 0;
  a.border = regpipe_common::BorderWeight(mov_->grid, mov_->spacing_mm, border_mm_);
  a.bins = bins_;
  a.maps = inline_maps ? nullptr : maps_.get();
  a.sums = results_.get();
  a.overlap = results_.get() + results_capacity_ * entries;
  a.costs_out = host_out_.device_view();  // the finish steps write the costs there in place
  a.overlaps_out = a.costs_out + k;
  l.k = k;
  l.threads_per_block = threads_per_block_;
  l.blocks = blocks_;
  l.sm_count = device_.sm_count;
  l.stream = stream_;
  l.layouts = &layouts_;
  l.unit_weights = !ref_->weighted && !mov_->weighted && border_mm_ == 0.0;
  if (scheme_.finishes_itself) l.fixed = fixed_point_scales();
  l.tickets = tickets_.get();
  l.host_maps = inline_maps ? host_maps_.get() : nullptr;
  l.scratch = &scratch_;
  l.scratch_double = &scratch_double_;
  a.signal = signal_.next(unsigned(k), stream_);
  scheme_.run(l);
  if (!scheme_.finishes_itself) finish_double_sums(l);
  signal_.wait(stream_);  // the one wait of an evaluation: the costs are in host memory
  results_zero_ = true;   // the kernel's clear step precedes any later work on the stream

  const double* costs = host_out_.get();
  const double* overlaps = costs + k;
  std::copy(costs, costs + k, request.costs_out);
  double* overlap_out = RP_HAS_MEMBER(&request, rp_cost_request, overlap_out) ? request.overlap_out : nullptr;
  if (overlap_out != nullptr)
    for (std::size_t t = 0; t < k; ++t) overlap_out[t] = overlaps[t] / ref_total_weight_;
}

}  // namespace regpipe::cost_cr_cuda
