#include "syn_optimizer.hpp"

#include "syn_params.hpp"
#include "syn_settings.hpp"

#ifdef REGPIPE_OPTIM_SYN_WITH_CUDA
#include <regpipe_common_cuda/cuda_check.hpp>
#include <regpipe_common_cuda/device_session.hpp>
#include <regpipe_common_cuda/device_syn.hpp>
#endif

#include <regpipe_common/fields/abi_views.hpp>
#include <regpipe_common/fields/resample_field.hpp>
#include <regpipe_common/syn/syn_levels.hpp>
#include <regpipe_common/syn/syn_registration.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace regpipe::optim_syn {
namespace {

namespace syn = regpipe_common::syn;

[[noreturn]] void refuse(const std::string& message) {
  throw rp::Error(RP_INVALID_ARGUMENT, "optim.syn: " + message);
}

const char* status_text(rp_status s) {
  switch (s) {
    case RP_INVALID_ARGUMENT: return "invalid argument";
    case RP_UNSUPPORTED: return "unsupported";
    case RP_OUT_OF_MEMORY: return "out of memory";
    case RP_DEVICE: return "device error";
    case RP_CANCELLED: return "cancelled";
    default: return "internal error";
  }
}

void check_image(const rp_image* image, const char* role) {
  if (image == nullptr) refuse(std::string(role) + " is NULL");
  if (!RP_HAS_MEMBER(image, rp_image, data)) refuse(std::string(role) + " is not an rp_image (size too small)");
  if (image->data == nullptr) refuse(std::string(role) + " has no data");
  if (image->dims[0] == 0 || image->dims[1] == 0 || image->dims[2] == 0)
    refuse(std::string(role) + " has a zero dimension");
}

bool same_grid(const uint32_t dims[3], const double v2w[16], const rp_image& fixed) {
  for (int a = 0; a < 3; ++a)
    if (dims[a] != fixed.dims[a]) return false;
  for (int i = 0; i < 16; ++i)
    if (!(std::abs(v2w[i] - fixed.voxel_to_world[i]) <= 1e-6 * (1.0 + std::abs(fixed.voxel_to_world[i]))))
      return false;
  return true;
}

std::string dims_text(const uint32_t d[3]) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

void check_field(const rp_field* field, const char* role, const rp_image& fixed) {
  if (!RP_HAS_MEMBER(field, rp_field, vectors)) refuse(std::string(role) + " is not an rp_field (size too small)");
  if (field->memory != RP_MEMORY_HOST) refuse(std::string(role) + " must be in host memory (RP_MEMORY_HOST)");
  if (field->vectors == nullptr) refuse(std::string(role) + " has no vectors");
  if (!same_grid(field->dims, field->voxel_to_world, fixed))
    refuse(std::string(role) + " must be on the fixed image's grid (" + dims_text(fixed.dims) +
           " voxels and its voxel_to_world); it is " + dims_text(field->dims));
}

// SyN's fields on the fixed grid (resampled when the last level's grid is a shrunk one).
void write_field(const regpipe_common::DisplacementField& field, const regpipe_common::FieldGeometry& full,
                 rp_field& out) {
  const std::size_t n = regpipe_common::voxel_count(full.dims);
  const bool on_grid = field.geometry.dims.nx == full.dims.nx && field.geometry.dims.ny == full.dims.ny &&
                       field.geometry.dims.nz == full.dims.nz;
  if (on_grid) {
    std::copy(field.vectors.begin(), field.vectors.end(), out.vectors);
  } else {
    const regpipe_common::DisplacementField r = regpipe_common::resample_field(regpipe_common::view_of(field), full);
    std::copy(r.vectors.begin(), r.vectors.begin() + 3 * n, out.vectors);
  }
  for (std::size_t i = 0; i < 3 * n; ++i)
    if (!std::isfinite(out.vectors[i])) throw rp::Error(RP_INTERNAL, "optim.syn: a non-finite field vector");
}

std::string format(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

#ifdef REGPIPE_OPTIM_SYN_WITH_CUDA
// syn_register_device with the fields on GPU `device` and the cost evaluating from device memory
// there; `refused` is set when the cost returns RP_UNSUPPORTED for device memory.
// The problem's cost before and after (abi.h 1.7), where a host asks for them, are measured on
// the device as well (regpipe_common_cuda::DeviceSynCosts); of the fields only the two warps
// come back.
syn::SynResult register_on_device(const rp_deformable_problem& p, const syn::SynOptions& options,
                                  const syn::SynObserver& observer, int device, long& evaluations, bool& refused) {
  regpipe_common_cuda::select_device(device, "optim.syn with device: host");
  struct Stream {
    cudaStream_t s = nullptr;
    Stream() { RP_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
    ~Stream() { cudaStreamDestroy(s); }
  } stream;
  void* const cost = p.cost;
  const rp_cost_dense_ext* const dense = p.dense;
  const regpipe_common_cuda::DeviceSynMetric metric = [cost, dense, device, &evaluations, &refused](
                                                          const regpipe_common::FieldGeometry& grid,
                                                          const float* fixed, const float* moving,
                                                          const float* mask, float* gradient, cudaStream_t) {
    double value = 0.0;
    const rp_dense_cost_request r = regpipe_common::dense_cost_request(
        grid, {fixed, moving, mask, &value, gradient}, RP_MEMORY_DEVICE, device);
    ++evaluations;
    const rp_status s = dense->evaluate_dense(cost, &r);
    if (s == RP_UNSUPPORTED) {
      refused = true;
      throw rp::Error(s, "optim.syn: device: cuda needs a cost whose RP_EXT_DENSE_COST takes device memory "
                         "(RP_MEMORY_DEVICE, e.g. cuda.lcc); this cost refused it: use device: host");
    }
    if (s != RP_OK)
      throw rp::Error(s, std::string("optim.syn: the cost's evaluate_dense failed (") + status_text(s) + ")");
    if (!std::isfinite(value))
      throw rp::Error(RP_INTERNAL, "optim.syn: the cost's evaluate_dense returned a non-finite cost");
    return value;
  };
  const bool asked = RP_HAS_MEMBER(&p, rp_deformable_problem, cost_after_out) &&
                     (p.cost_before_out != nullptr || p.cost_after_out != nullptr);
  regpipe_common_cuda::DeviceSynCosts costs;
  regpipe_common_cuda::DeviceSynOutputs outputs;
  outputs.half_way_fields = false;  // the problem takes the two warps only
  outputs.costs = asked ? &costs : nullptr;
  syn::SynResult result = regpipe_common_cuda::syn_register_device(*p.fixed, *p.moving, p.fixed_mask, options, metric,
                                                                   p.initial_matrix, observer, stream.s, outputs);
  if (asked && p.cost_before_out != nullptr) *p.cost_before_out = costs.before;
  if (asked && p.cost_after_out != nullptr) *p.cost_after_out = costs.after;
  return result;
}
#endif

}  // namespace

SynOptimizer::SynOptimizer(const rp_host* host, const rp::Params& params)
    : host_(host), options_(syn_options_from(params)) {
  const std::string device = params.get_string(kSynParams[kDevice].name);
  if (device != "auto" && device != "host" && device != "cuda")
    refuse("device '" + device + "' is not one of auto, host, cuda");
  auto_device_ = device == "auto";
  on_cuda_ = device == "cuda";
  const long long index = params.get_int(kSynParams[kCudaDevice].name);
  rp::Params::check_range(kSynParams[kCudaDevice].name, double(index), kSynParams[kCudaDevice].min,
                          kSynParams[kCudaDevice].max);
  cuda_device_ = int(index);
#ifndef REGPIPE_OPTIM_SYN_WITH_CUDA
  if (on_cuda_)
    throw rp::Error(RP_UNSUPPORTED, "optim.syn: device: cuda needs optim.syn built with CUDA (nvcc); this build has "
                                    "none: use device: host");
#endif
}

void SynOptimizer::minimize(const rp_objective&, double*, double*) {
  throw rp::Error(RP_UNSUPPORTED,
                  "optim.syn is a deformable optimizer (RP_EXT_DEFORMABLE_OPTIMIZER): use it in a deformable "
                  "stage, not to minimise an affine objective");
}

void SynOptimizer::register_deformable(const rp_deformable_problem& p) {
  check_image(p.fixed, "the fixed image");
  check_image(p.moving, "the moving image");
  if (p.fixed_mask != nullptr) {
    check_image(p.fixed_mask, "the fixed mask");
    if (!same_grid(p.fixed_mask->dims, p.fixed_mask->voxel_to_world, *p.fixed))
      refuse("the fixed mask must be on the fixed image's grid");
  }
  check_field(p.forward_out, "forward_out", *p.fixed);
  if (p.inverse_out != nullptr) check_field(p.inverse_out, "inverse_out", *p.fixed);
  if (p.initial_matrix != nullptr)
    for (int i = 0; i < 16; ++i)
      if (!std::isfinite(p.initial_matrix[i])) refuse("initial_matrix has a non-finite entry");

  syn::SynOptions options = options_;
  void* const cost = p.cost;
  const rp_cost_dense_ext* const dense = p.dense;
  long evaluations = 0;
  options.metric_function = [cost, dense, &evaluations](const syn::SynMetricInput& in, std::span<float> gradient) {
    double value = 0.0;
    const rp_dense_cost_request r = regpipe_common::dense_cost_request(
        in.grid, {in.fixed.data(), in.moving.data(), in.mask.empty() ? nullptr : in.mask.data(), &value,
                  gradient.data()});
    ++evaluations;
    const rp_status s = dense->evaluate_dense(cost, &r);
    if (s != RP_OK)
      throw rp::Error(s, std::string("optim.syn: the cost's evaluate_dense failed (") + status_text(s) + ")");
    if (!std::isfinite(value)) throw rp::Error(RP_INTERNAL, "optim.syn: the cost's evaluate_dense returned a non-finite cost");
    return value;
  };

  long total_iterations = 0;
  for (const syn::SynLevel& l : options.levels) total_iterations += l.iterations;
  std::vector<long> before_level{0};
  for (const syn::SynLevel& l : options.levels) before_level.push_back(before_level.back() + l.iterations);
  const syn::SynObserver observer = [&](int level, int iteration, double value) {
    if (iteration % 5 == 0 || iteration + 1 == options.levels[level].iterations)
      progress(double(before_level[level] + iteration + 1) / double(std::max(1L, total_iterations)),
               "SyN level " + std::to_string(level + 1) + "/" + std::to_string(options.levels.size()) +
                   ", iteration " + std::to_string(iteration + 1) + ", metric " + format(value));
    return !cancelled();
  };
  if (cancelled()) throw rp::Error(RP_CANCELLED, "optim.syn: cancelled before starting");

  // device: auto follows the cost (abi.h 1.6's cost_device): the GPU it computes on, where this
  // build has the device loop; a cost there that refuses device memory sends it to the CPU.
  const int32_t cost_device = RP_HAS_MEMBER(&p, rp_deformable_problem, cost_device) ? p.cost_device : -1;
  bool on_cuda = on_cuda_;
  int cuda_device = cuda_device_;
#ifdef REGPIPE_OPTIM_SYN_WITH_CUDA
  if (auto_device_ && cost_device >= 0) {
    on_cuda = true;
    cuda_device = cost_device;
  }
#endif
  syn::SynResult result;
#ifdef REGPIPE_OPTIM_SYN_WITH_CUDA
  if (on_cuda) {
    bool refused = false;  // the cost returned RP_UNSUPPORTED for device memory
    try {
      result = register_on_device(p, options, observer, cuda_device, evaluations, refused);
    } catch (const rp::Error&) {
      if (!(auto_device_ && refused)) throw;
      log(RP_LOG_INFO, "optim.syn: the cost refused device memory: the CPU loop runs (device: auto)");
      on_cuda = false;
      evaluations = 0;
    }
  }
#endif
  if (!on_cuda) result = syn::syn_register(*p.fixed, *p.moving, p.fixed_mask, options, p.initial_matrix, observer);

  const regpipe_common::FieldGeometry full = syn::geometry_of(*p.fixed);
  write_field(result.forward, full, *p.forward_out);
  if (p.inverse_out != nullptr) write_field(result.inverse, full, *p.inverse_out);

  std::ostringstream summary;
  summary << "optim.syn: fields on " << (on_cuda ? "cuda:" + std::to_string(cuda_device) : std::string("the host"))
          << (auto_device_ ? " (device: auto)" : "") << ", " << evaluations << " dense cost evaluations; levels";
  for (const syn::SynLevelReport& l : result.levels)
    summary << " [shrink " << l.shrink_factor << ": " << l.metric_values.size() << " iterations"
            << (l.converged ? ", converged" : "") << ", metric "
            << format(l.metric_values.empty() ? 0.0 : l.metric_values.front()) << " -> "
            << format(l.metric_values.empty() ? 0.0 : l.metric_values.back()) << ", " << format(l.seconds) << " s]";
  summary << "; inverse residual " << format(result.inverse_max_residual_mm) << " mm";
  log(RP_LOG_INFO, summary.str());
}

void SynOptimizer::log(int32_t level, const std::string& message) const {
  if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, log) && host_->log != nullptr)
    host_->log(host_->ctx, level, message.c_str());
}

void SynOptimizer::progress(double fraction, const std::string& what) const {
  if (host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, progress) && host_->progress != nullptr)
    host_->progress(host_->ctx, fraction, what.c_str());
}

bool SynOptimizer::cancelled() const {
  return host_ != nullptr && RP_HAS_MEMBER(host_, rp_host, should_cancel) && host_->should_cancel != nullptr &&
         host_->should_cancel(host_->ctx) != 0;
}

}  // namespace regpipe::optim_syn
