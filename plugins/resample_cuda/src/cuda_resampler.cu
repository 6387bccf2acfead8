#include "cuda_resampler.hpp"
#include "resample_params.hpp"

#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/resample_request.hpp>
#include <regpipe_common_cuda/cuda_check.hpp>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <new>
#include <utility>

namespace regpipe::resample_cuda {

using regpipe_common_cuda::DeviceBuffer;

namespace {

int read_int(const rp::Params& params, const char* name) {
  return int(params.get_number(kParams, std::size(kParams), name));
}

Extent extent_of(const uint32_t dims[3]) { return {dims[0], dims[1], dims[2]}; }

// Staging: kStagingFloats (16 MB) page-locked, copied through in rounds of kSlabs slabs (on
// an H100 host: a pageable 37 MB copy 5.1 ms up, 2.9 ms down; through pinned memory with 16
// threads 2.0 ms each way). Below kDirectFloats (4 MB) a pageable copy costs no more than
// starting the threads (0.2-0.4 ms).
constexpr std::size_t kStagingFloats = std::size_t(4) << 20, kSlabs = 8, kDirectFloats = std::size_t(1) << 20;

}  // namespace

CudaResampler::CudaResampler(const rp_host* host, const rp::Params& params)
    : host_(host),
      texture_sampling_(params.get_string("sampling") == "texture"),
      sinc_radius_(read_int(params, "sinc_radius")) {
  // Parameters first: a bad value is the user's error on any machine, with or without a GPU.
  device_ = regpipe_common_cuda::select_device(read_int(params, "device"), "resample.cpu");
  try {
    RP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // The staging and the pyramid's kernels now rather than in the first registration's pyramid
    // (on an H100 host the staging's allocation took ~9 ms of it): `regpipe run` creates the
    // components while it reads the images.
    RP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging_), kStagingFloats * sizeof(float)));
    while (slab_done_.size() < kSlabs) {
      cudaEvent_t e = nullptr;
      RP_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      slab_done_.push_back(e);
    }
    load_pyramid_kernels();
  } catch (...) {  // no destructor runs for a constructor that throws
    release();
    throw;
  }
}

CudaResampler::~CudaResampler() { release(); }

void CudaResampler::release() noexcept {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  for (cudaEvent_t e : slab_done_) cudaEventDestroy(e);
  if (staging_ != nullptr) cudaFreeHost(staging_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void CudaResampler::copy_to_device(float* device, const float* host, std::size_t count) {
  ++counts_.uploads;
  counts_.upload_bytes += count * sizeof(float);
  if (count < kDirectFloats) {
    RP_CUDA_CHECK(cudaMemcpyAsync(device, host, count * sizeof(float), cudaMemcpyHostToDevice, stream_));
    return;
  }
  for (std::size_t done = 0; done < count; done += kStagingFloats) {
    RP_CUDA_CHECK(cudaStreamSynchronize(stream_));  // earlier copies have left staging_
    const std::size_t round = std::min(kStagingFloats, count - done);
    regpipe_common::parallel_slabs(kSlabs, [&](std::size_t s) {
      const std::size_t a = regpipe_common::slab_begin(round, kSlabs, s);
      const std::size_t n = regpipe_common::slab_begin(round, kSlabs, s + 1) - a;
      std::memcpy(staging_ + a, host + done + a, n * sizeof(float));
      RP_CUDA_CHECK(cudaMemcpyAsync(device + done + a, staging_ + a, n * sizeof(float), cudaMemcpyHostToDevice, stream_));
    });
  }
}

void CudaResampler::copy_to_host(float* host, const float* device, std::size_t count) {
  ++counts_.downloads;
  counts_.download_bytes += count * sizeof(float);
  if (count < kDirectFloats) {
    RP_CUDA_CHECK(cudaMemcpyAsync(host, device, count * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    RP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return;
  }
  for (std::size_t done = 0; done < count; done += kStagingFloats) {
    const std::size_t round = std::min(kStagingFloats, count - done);
    for (std::size_t s = 0; s < kSlabs; ++s) {
      const std::size_t a = regpipe_common::slab_begin(round, kSlabs, s);
      const std::size_t n = regpipe_common::slab_begin(round, kSlabs, s + 1) - a;
      RP_CUDA_CHECK(cudaMemcpyAsync(staging_ + a, device + done + a, n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
      RP_CUDA_CHECK(cudaEventRecord(slab_done_[s], stream_));
    }
    regpipe_common::parallel_slabs(kSlabs, [&](std::size_t s) {
      const std::size_t a = regpipe_common::slab_begin(round, kSlabs, s);
      const std::size_t n = regpipe_common::slab_begin(round, kSlabs, s + 1) - a;
      RP_CUDA_CHECK(cudaEventSynchronize(slab_done_[s]));
      std::memcpy(host + done + a, staging_ + a, n * sizeof(float));
    });
  }
}

void CudaResampler::check_cancelled() const {
  if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, should_cancel) && host_->should_cancel != nullptr &&
      host_->should_cancel(host_->ctx) != 0)
    throw rp::Error(RP_CANCELLED, "resampling cancelled");
}

void CudaResampler::load_input(const rp_resample_request& r) {
  const Extent in = extent_of(r.input->dims);
  const uint64_t id = RP_HAS_MEMBER(&r, rp_resample_request, input_id) ? r.input_id : 0;
  const bool same_image = id != 0 && id == loaded_id_ && r.input->data == loaded_data_ && in.nx == loaded_extent_.nx &&
                          in.ny == loaded_extent_.ny && in.nz == loaded_extent_.nz &&
                          std::equal(loaded_voxel_to_world_, loaded_voxel_to_world_ + 16, r.input->voxel_to_world);
  if (same_image) return;
  loaded_id_ = 0;  // until the upload below has succeeded
  input_.ensure(in.count());
  copy_to_device(input_.get(), r.input->data, in.count());
  loaded_id_ = id;
  loaded_data_ = r.input->data;
  loaded_extent_ = in;
  std::copy(r.input->voxel_to_world, r.input->voxel_to_world + 16, loaded_voxel_to_world_);
}

const float* CudaResampler::prefilter(const rp_resample_request& r) {
  const Extent extent = extent_of(r.input->dims);
  const uint32_t dims[3] = {extent.nx, extent.ny, extent.nz};
  const float* source = input_.get();
  for (int axis = 0; axis < 3; ++axis) {
    const double sigma = r.prefilter_sigma_mm[axis] / regpipe_common::axis_spacing(r.input->voxel_to_world, axis);
    if (!(sigma > 0.0) || dims[axis] == 1) continue;
    check_cancelled();
    DeviceBuffer<float>& target_buffer = source == work_a_.get() ? work_b_ : work_a_;
    target_buffer.ensure(extent.count());
    float* target = target_buffer.get();
    const std::vector<double> weights = regpipe_common::gaussian_half_kernel(sigma, dims[axis]);
    kernel_weights_.upload(weights, stream_);
    launch_smooth_axis(source, target, extent, axis, kernel_weights_.get(), int(weights.size()) - 1, stream_);
    source = target;
  }
  return source;
}

void CudaResampler::sample(const rp_resample_request& r, DeviceBuffer<float>& output, bool host_output) {
  regpipe_common::check_resample_request(
      r, "resample.cuda", {RP_INTERP_NEAREST, RP_INTERP_TRILINEAR, RP_INTERP_SINC, RP_INTERP_BSPLINE}, nullptr,
      host_output);
  static const double kIdentity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  SampleArgs args{};
  if (!regpipe_common::make_voxel_map(r.out_voxel_to_world, r.matrix ? r.matrix : kIdentity,
                                      r.input->voxel_to_world, &args.map))
    throw rp::Error(RP_INTERNAL, "voxel map failed although the request's matrices were checked");
  const Extent in = extent_of(r.input->dims);
  args.out = extent_of(r.out_dims);
  output.ensure(args.out.count());
  check_cancelled();
  load_input(r);
  args.input = prefilter(r);
  args.input_grid = {int(in.nx), int(in.ny), int(in.nz)};
  args.output = output.get();
  args.interpolation = r.interpolation;
  args.sinc_radius = sinc_radius_;
  args.background = r.background;
  if (r.interpolation == RP_INTERP_BSPLINE) {
    coefficients_.ensure(in.count());
    launch_bspline_coefficients(args.input, coefficients_.get(), in, stream_);
    args.coefficients = coefficients_.get();
  }
  if (texture_sampling_ && r.interpolation == RP_INTERP_TRILINEAR)
    args.texture = texture_.load(args.input, in, stream_);
  check_cancelled();
  launch_sample(args, stream_);
}

void CudaResampler::resample(const rp_resample_request& r) {
  sample(r, output_, true);
  copy_to_host(r.out_data, output_.get(), extent_of(r.out_dims).count());
}

void CudaResampler::resample_to_device(const rp_resample_request& r, rp_device_image& out) {
  // The smallest spare buffer that holds the output, else a new one.
  const std::size_t count = extent_of(r.out_dims).count();
  auto best = spare_.end();
  for (auto it = spare_.begin(); it != spare_.end(); ++it)
    if ((*it)->capacity() >= count && (best == spare_.end() || (*it)->capacity() < (*best)->capacity())) best = it;
  std::unique_ptr<DeviceBuffer<float>> buffer;
  if (best != spare_.end()) {
    buffer = std::move(*best);
    spare_.erase(best);
  } else {
    buffer = std::make_unique<DeviceBuffer<float>>();
  }
  sample(r, *buffer, false);
  RP_CUDA_CHECK(cudaStreamSynchronize(stream_));  // complete when the call returns (abi.h)
  const float* data = buffer->get();
  const uint64_t handle = last_handle_ + 1;
  device_images_.emplace(handle, std::move(buffer));
  last_handle_ = handle;
  std::copy(r.out_dims, r.out_dims + 3, out.dims);
  std::copy(r.out_voxel_to_world, r.out_voxel_to_world + 16, out.voxel_to_world);
  out.device = device_.index;
  out.data = data;
  out.handle = handle;
}

void CudaResampler::release_device_image(uint64_t handle) noexcept {
  const auto it = device_images_.find(handle);
  if (it == device_images_.end()) return;
  // abi.h: no component reads it any more, and later work on stream_ is ordered after earlier.
  std::unique_ptr<DeviceBuffer<float>> buffer = std::move(it->second);
  device_images_.erase(it);
  try {
    spare_.push_back(std::move(buffer));
  } catch (const std::bad_alloc&) {  // no room to keep it: freed here
  }
}

}  // namespace regpipe::resample_cuda
