#include "cuda_dense_cost.hpp"

#include "warp_kernel.hpp"

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/dense_metrics/world_gradient.hpp>
#include <regpipe_common/prepared_image.hpp>
#include <regpipe_common/resample_request.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

#include <cmath>
#include <cstring>

namespace regpipe::cost_dense_cuda {
namespace {

[[noreturn]] void fail(const std::string& message) { throw rp::Error(RP_INVALID_ARGUMENT, "evaluate_dense: " + message); }

// The messages of cost_cpu's dense adapter (dense_request.cpp).
void require_finite(const float* values, std::size_t n, const char* role) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i])) fail(std::string(role) + " voxel " + std::to_string(i) + " is not finite");
}

// The device a pointer lives on, or -1 where it is not device memory.
int device_of_pointer(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the error an unknown host pointer leaves
    return -1;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged ? attributes.device : -1;
}

}  // namespace

CudaDenseCost::CudaDenseCost(const rp_host* host, const rp::Params& params, ParamList schema,
                             std::unique_ptr<DeviceMetric> metric, const char* id, const char* cpu_twin)
    : host_(host),
      metric_(std::move(metric)),
      id_(id),
      threads_per_block_(int(params.get_number(schema.params, schema.count, "threads_per_block"))) {
  if (threads_per_block_ % 32 != 0)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "threads_per_block=" + std::to_string(threads_per_block_) + " is not a multiple of 32");
  device_ = regpipe_common_cuda::select_device(int(params.get_number(schema.params, schema.count, "device")), cpu_twin);
  RP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaDenseCost::~CudaDenseCost() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

CudaDenseCost::DeviceImage CudaDenseCost::upload(const rp_image& image, const rp_image* weight, const char* role,
                                                 DeviceBuffer<float>& values, DeviceBuffer<float>& weights) {
  const regpipe_common::PreparedImage prepared = regpipe_common::prepare_image(image, weight, role);
  DeviceImage out;
  out.grid = prepared.grid;
  std::memcpy(out.voxel_to_world, prepared.voxel_to_world, sizeof(out.voxel_to_world));
  out.weighted = !prepared.weights.empty();
  for (std::size_t i = 0; i < prepared.voxel_count(); ++i) out.total_weight += prepared.weight(i);
  regpipe_common_cuda::require_device_memory(prepared.voxel_count() * sizeof(float) * (out.weighted ? 2 : 1),
                                             std::string("the ") + role + " image", device_);
  values.upload(prepared.values, stream_);
  if (out.weighted) weights.upload(prepared.weights, stream_);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));  // `prepared` goes out of scope
  return out;
}

void CudaDenseCost::set_reference(const rp_image& image, const rp_image* weight) {
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  ref_.reset();
  ref_ = upload(image, weight, "reference", ref_values_, ref_weights_);
}

void CudaDenseCost::set_moving(const rp_image& image, const rp_image* weight) {
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  mov_.reset();
  mov_ = upload(image, weight, "moving", mov_values_, mov_weights_);
}

DenseProblem CudaDenseCost::problem_on(const regpipe_common::Grid& grid, const double voxel_to_world[16]) const {
  DenseProblem p;
  p.nx = grid.nx;
  p.ny = grid.ny;
  p.nz = grid.nz;
  const regpipe_common::dense_metrics::Matrix3 to_world =
      regpipe_common::dense_metrics::unit_axes_inverse_transpose(voxel_to_world);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) p.to_world[3 * r + c] = to_world[r][c];
  for (int a = 0; a < 3; ++a) p.spacing_mm[a] = regpipe_common::axis_spacing(voxel_to_world, a);
  p.threads_per_block = threads_per_block_;
  return p;
}

void CudaDenseCost::evaluate(const rp_cost_request& request) {
  if (!ref_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a reference image: call set_reference first");
  if (!mov_) throw rp::Error(RP_INVALID_ARGUMENT, "evaluate needs a moving image: call set_moving first");
  for (std::size_t t = 0; t < request.k; ++t)
    regpipe_common::check_affine(request.matrices + 16 * t, "transform " + std::to_string(t) + " of " +
                                                                std::to_string(request.k) +
                                                                " (reference world -> moving world)");
  if (request.k == 0) return;
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  const std::size_t n = regpipe_common::voxel_count(ref_->grid);
  regpipe_common_cuda::require_device_memory(2 * n * sizeof(float) + metric_->workspace_bytes(n, true),
                                             std::string(id_) + "'s evaluation", device_);
  warped_.ensure(n);
  warped_weight_.ensure(n);
  results_.ensure(2 * request.k);
  double* results = results_.device_view();
  DenseProblem p = problem_on(ref_->grid, ref_->voxel_to_world);
  p.fixed = ref_values_.get();
  p.moving = warped_.get();
  p.weight = warped_weight_.get();
  for (std::size_t t = 0; t < request.k; ++t) {
    if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, should_cancel) && host_->should_cancel != nullptr &&
        host_->should_cancel(host_->ctx) != 0)
      throw rp::Error(RP_CANCELLED, "cost evaluation cancelled by the host");
    WarpProblem w;
    if (!regpipe_common::make_voxel_map(ref_->voxel_to_world, request.matrices + 16 * t, mov_->voxel_to_world, &w.map))
      throw rp::Error(RP_INVALID_ARGUMENT, "moving voxel_to_world is not invertible");
    w.ref_grid = ref_->grid;
    w.mov_grid = mov_->grid;
    w.ref_weight = ref_->weighted ? ref_weights_.get() : nullptr;
    w.mov_values = mov_values_.get();
    w.mov_weight = mov_->weighted ? mov_weights_.get() : nullptr;
    w.warped_out = warped_.get();
    w.weight_out = warped_weight_.get();
    w.threads_per_block = threads_per_block_;
    run_warp(w, warp_partials_, stream_, results + request.k + t);
    metric_->run(p, device_, stream_, results + t);
  }
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (std::size_t t = 0; t < request.k; ++t) {
    request.costs_out[t] = results_.get()[t];
    if (RP_HAS_MEMBER(&request, rp_cost_request, overlap_out) && request.overlap_out != nullptr)
      request.overlap_out[t] = ref_->total_weight > 0.0 ? results_.get()[request.k + t] / ref_->total_weight : 0.0;
  }
}

void CudaDenseCost::bind_request_images(const rp_dense_cost_request& request, std::size_t n, DenseProblem& p) {
  if (request.memory == RP_MEMORY_DEVICE) {
    const void* pointers[4] = {request.fixed, request.moving, request.fixed_mask, request.gradient_out};
    const char* roles[4] = {"fixed", "moving", "fixed_mask", "gradient_out"};
    for (int k = 0; k < 4; ++k)
      if (pointers[k] != nullptr && device_of_pointer(pointers[k]) != device_.index)
        fail(std::string(roles[k]) + " is not device memory of device " + std::to_string(device_.index) +
             " (memory=RP_MEMORY_DEVICE)");
    // Read in evaluate_dense: checked by the metric's own pass where it reads both images.
    if (metric_->checks_finite())
      p.first_non_finite = device_inputs_check_.prepare(n, stream_);
    else
      device_inputs_check_.enqueue(request.fixed, request.moving, n, stream_);
    p.fixed = request.fixed;
    p.moving = request.moving;
    p.weight = request.fixed_mask;
    p.gradient_out = request.gradient_out;
    return;
  }
  require_finite(request.fixed, n, "fixed");
  require_finite(request.moving, n, "moving");
  fixed_.upload(request.fixed, n, stream_);
  moving_.upload(request.moving, n, stream_);
  if (request.fixed_mask != nullptr) mask_.upload(request.fixed_mask, n, stream_);
  if (request.gradient_out != nullptr) gradient_.ensure(3 * n);
  p.fixed = fixed_.get();
  p.moving = moving_.get();
  p.weight = request.fixed_mask != nullptr ? mask_.get() : nullptr;
  p.gradient_out = request.gradient_out != nullptr ? gradient_.get() : nullptr;
}

void CudaDenseCost::evaluate_dense(const rp_dense_cost_request& request) {
  const bool on_device = request.memory == RP_MEMORY_DEVICE;
  if (request.memory != RP_MEMORY_HOST && !on_device)
    throw rp::Error(RP_UNSUPPORTED, "evaluate_dense: memory=" + std::to_string(request.memory) +
                                        " is neither RP_MEMORY_HOST nor RP_MEMORY_DEVICE");
  if (on_device && request.device != device_.index)
    throw rp::Error(RP_INVALID_ARGUMENT, "evaluate_dense: the request's images are on device " +
                                             std::to_string(request.device) + "; this instance runs on device " +
                                             std::to_string(device_.index));
  RP_CUDA_CHECK(cudaSetDevice(device_.index));
  const regpipe_common::Grid grid{int(request.dims[0]), int(request.dims[1]), int(request.dims[2])};
  DenseProblem p = problem_on(grid, request.voxel_to_world);  // a bad grid is refused before any work
  const std::size_t n = regpipe_common::voxel_count(grid);
  const bool want_gradient = request.gradient_out != nullptr;
  const std::size_t image_bytes = on_device ? 0 : n * sizeof(float) * (3 + (want_gradient ? 3 : 0));
  regpipe_common_cuda::require_device_memory(image_bytes + metric_->workspace_bytes(n, request.fixed_mask != nullptr),
                                             std::string(id_) + "'s evaluate_dense", device_);
  bind_request_images(request, n, p);
  p.weight_is_mask = true;
  results_.ensure(1);
  metric_->run(p, device_, stream_, results_.device_view());
  if (p.first_non_finite != nullptr) device_inputs_check_.enqueue_readback(stream_);
  if (want_gradient && !on_device)
    RP_CUDA_CHECK(cudaMemcpyAsync(request.gradient_out, gradient_.get(), 3 * n * sizeof(float),
                                  cudaMemcpyDeviceToHost, stream_));
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (on_device) {
    const NonFinite bad = device_inputs_check_.result();
    if (bad.a < n) fail("fixed voxel " + std::to_string(bad.a) + " is not finite");
    if (bad.b < n) fail("moving voxel " + std::to_string(bad.b) + " is not finite");
  }
  *request.cost_out = results_.get()[0];
}

}  // namespace regpipe::cost_dense_cuda
