#include <regpipe/host/components.hpp>
#include <regpipe/host/plugin_watchdog.hpp>

#include <limits>
#include <vector>

namespace regpipe {

const char* status_name(rp_status status) {
  switch (status) {
    case RP_OK: return "ok";
    case RP_INVALID_ARGUMENT: return "invalid argument";
    case RP_UNSUPPORTED: return "unsupported";
    case RP_OUT_OF_MEMORY: return "out of memory";
    case RP_DEVICE: return "device error";
    case RP_CANCELLED: return "cancelled";
    case RP_INTERNAL: return "internal error";
    default: return "unknown status";
  }
}

namespace {

// Typed values as the ABI's array; the strings stay owned by `values`.
std::vector<rp_param_value> abi_params(const std::map<std::string, ParamValue>& values) {
  std::vector<rp_param_value> out;
  for (const auto& [name, v] : values) {
    rp_param_value p{};
    p.size = sizeof(rp_param_value);
    p.name = name.c_str();
    p.type = v.type;
    p.int_value = v.int_value;
    p.double_value = v.double_value;
    p.string_value = v.string_value.c_str();
    out.push_back(p);
  }
  return out;
}

// A call into the plugin: watched (plugin_watchdog.hpp), and a C++ exception that escapes it
// across the C ABI (abi.h forbids it; plugin.hpp's RP_GUARD prevents it) caught here and
// reported as the plugin's failure rather than unwinding through the host.
template <class Fn>
auto call_plugin(const Component& c, const char* what, Fn&& fn) {
  WatchedCall watched(c, what);
  try {
    return fn();
  } catch (...) {
    throw ComponentError(RP_INTERNAL, std::string(kind_name(c.kind)) + " '" + c.id + "' " + what +
                                          ": a C++ exception escaped the plugin across the C ABI (a plugin bug)");
  }
}

// destroy, from a destructor: nothing may leave it.
template <class Vtable>
void destroy_instance(const Component& c, const Vtable* vt, void* self) noexcept {
  try {
    call_plugin(c, "destroy", [&] { vt->destroy(self); });
  } catch (...) {  // nothing to do about it: the instance is gone either way
  }
}

template <class CreateFn>
void* create_instance(const Component& c, HostServices& services,
                      const std::map<std::string, ParamValue>& params, CreateFn create) {
  std::vector<rp_param_value> abi = abi_params(params);
  rp_error_buf err{};
  err.size = sizeof(err);
  void* self = nullptr;
  const rp_status s =
      call_plugin(c, "create", [&] { return create(services.abi(), abi.data(), abi.size(), &self, &err); });
  if (s != RP_OK || self == nullptr) {
    std::string why = err.msg[0] != '\0' ? err.msg : status_name(s);
    throw ComponentError(s == RP_OK ? RP_INTERNAL : s,
                         std::string(kind_name(c.kind)) + " '" + c.id + "': " + why);
  }
  return self;
}

// The component's RP_EXT_DEVICE_IMAGE struct when its vtable has get_extension and the struct
// holds the 1.3 members (up to transfer_counts); null otherwise.
template <class Ext, class Vtable>
const Ext* device_image_extension(const Vtable* vt, void* self) {
  if (!RP_HAS_MEMBER(vt, Vtable, get_extension) || vt->get_extension == nullptr) return nullptr;
  const auto* ext = static_cast<const Ext*>(vt->get_extension(self, RP_EXT_DEVICE_IMAGE));
  if (ext == nullptr || !RP_HAS_MEMBER(ext, Ext, transfer_counts) || ext->device == nullptr ||
      ext->transfer_counts == nullptr)
    return nullptr;
  return ext;
}

// The component's RP_EXT_DENSE_COST struct, when offered with its 1.5 member; null otherwise.
const rp_cost_dense_ext* dense_extension(const rp_cost_vtable* vt, void* self) {
  if (!RP_HAS_MEMBER(vt, rp_cost_vtable, get_extension) || vt->get_extension == nullptr) return nullptr;
  const auto* ext = static_cast<const rp_cost_dense_ext*>(vt->get_extension(self, RP_EXT_DENSE_COST));
  if (ext == nullptr || !RP_HAS_MEMBER(ext, rp_cost_dense_ext, evaluate_dense) || ext->evaluate_dense == nullptr)
    return nullptr;
  return ext;
}

// The component's RP_EXT_DEFORMABLE_OPTIMIZER struct, when offered with its 1.5 member; null
// otherwise.
const rp_optimizer_deformable_ext* deformable_extension(const rp_optimizer_vtable* vt, void* self) {
  if (!RP_HAS_MEMBER(vt, rp_optimizer_vtable, get_extension) || vt->get_extension == nullptr) return nullptr;
  const auto* ext =
      static_cast<const rp_optimizer_deformable_ext*>(vt->get_extension(self, RP_EXT_DEFORMABLE_OPTIMIZER));
  if (ext == nullptr || !RP_HAS_MEMBER(ext, rp_optimizer_deformable_ext, register_deformable) ||
      ext->register_deformable == nullptr)
    return nullptr;
  return ext;
}

// The component's RP_EXT_DEVICE_INFO answer, when it offers one and can give it.
template <class Vtable>
std::optional<DeviceDescription> describe_device(const Vtable* vt, void* self) {
  if (!RP_HAS_MEMBER(vt, Vtable, get_extension) || vt->get_extension == nullptr) return std::nullopt;
  const auto* ext = static_cast<const rp_device_info_ext*>(vt->get_extension(self, RP_EXT_DEVICE_INFO));
  if (ext == nullptr || !RP_HAS_MEMBER(ext, rp_device_info_ext, describe_device) || ext->describe_device == nullptr)
    return std::nullopt;
  rp_device_info info{};
  info.size = sizeof(info);
  if (ext->describe_device(self, &info) != RP_OK) return std::nullopt;
  info.name[sizeof(info.name) - 1] = '\0';  // whatever the plugin wrote, a C string
  return DeviceDescription{info.device,       info.name,           info.compute_major, info.compute_minor,
                           info.memory_bytes, info.driver_version, info.runtime_version};
}

template <class Ext>
TransferCounts counts_of(const Ext* ext, const void* self) {
  if (ext == nullptr) return {};
  rp_transfer_counts c{};
  c.size = sizeof(c);
  ext->transfer_counts(self, &c);
  return {c.uploads, c.upload_bytes, c.downloads, c.download_bytes};
}

[[noreturn]] void fail(const Component& c, rp_status s, const char* what, const char* message) {
  std::string m = message != nullptr && *message != '\0' ? message : status_name(s);
  throw ComponentError(s, std::string(kind_name(c.kind)) + " '" + c.id + "' " + what + ": " + m);
}

}  // namespace

// ---- cost ----
CostInstance::CostInstance(const Component& c, HostServices& services,
                           const std::map<std::string, ParamValue>& params)
    : component_(&c), vt_(static_cast<const rp_cost_vtable*>(c.vtable)) {
  self_ = create_instance(c, services, params, vt_->create);
  device_images_ = device_image_extension<rp_cost_device_image_ext>(vt_, self_);
  dense_ = dense_extension(vt_, self_);
}
CostInstance::~CostInstance() { destroy_instance(*component_, vt_, self_); }

void CostInstance::set_reference(const rp_device_image& ref) {
  if (device_images_ == nullptr || device_images_->set_reference_device == nullptr)
    fail(*component_, RP_UNSUPPORTED, "set_reference_device", "the reference is not taken from device memory");
  check(call_plugin(*component_, "set_reference_device",
                    [&] { return device_images_->set_reference_device(self_, &ref); }),
        "set_reference_device");
}

void CostInstance::set_moving(const rp_device_image& mov) {
  if (device_images_ == nullptr || device_images_->set_moving_device == nullptr)
    fail(*component_, RP_UNSUPPORTED, "set_moving_device", "the moving image is not taken from device memory");
  check(call_plugin(*component_, "set_moving_device", [&] { return device_images_->set_moving_device(self_, &mov); }),
        "set_moving_device");
}

int32_t CostInstance::device() const { return device_images_ ? device_images_->device(self_) : -1; }

TransferCounts CostInstance::transfer_counts() const { return counts_of(device_images_, self_); }

std::optional<DeviceDescription> CostInstance::device_description() const { return describe_device(vt_, self_); }

void CostInstance::check(rp_status s, const char* what) const {
  if (s != RP_OK) fail(*component_, s, what, vt_->last_error(self_));
}

void CostInstance::set_reference(const Image& ref, const Image* weight) {
  rp_image r = ref.view(), w{};
  if (weight != nullptr) w = weight->view();
  check(call_plugin(*component_, "set_reference",
                    [&] { return vt_->set_reference(self_, &r, weight != nullptr ? &w : nullptr); }),
        "set_reference");
}

void CostInstance::set_moving(const Image& mov, const Image* weight) {
  rp_image m = mov.view(), w{};
  if (weight != nullptr) w = weight->view();
  check(call_plugin(*component_, "set_moving",
                    [&] { return vt_->set_moving(self_, &m, weight != nullptr ? &w : nullptr); }),
        "set_moving");
}

void CostInstance::evaluate(const double* matrices, size_t k, double* costs, double* overlap) {
  rp_cost_request req{};
  req.size = sizeof(req);
  req.k = k;
  req.matrices = matrices;
  req.costs_out = costs;
  req.overlap_out = overlap;
  check(call_plugin(*component_, "evaluate", [&] { return vt_->evaluate(self_, &req); }), "evaluate");
}

void CostInstance::evaluate_dense(rp_dense_cost_request request) {
  if (dense_ == nullptr)
    fail(*component_, RP_UNSUPPORTED, "evaluate_dense", "the component offers no RP_EXT_DENSE_COST (abi.h 1.5)");
  request.size = sizeof(request);
  check(call_plugin(*component_, "evaluate_dense", [&] { return dense_->evaluate_dense(self_, &request); }),
        "evaluate_dense");
}

// ---- optimizer ----
OptimizerInstance::OptimizerInstance(const Component& c, HostServices& services,
                                     const std::map<std::string, ParamValue>& params)
    : component_(&c), vt_(static_cast<const rp_optimizer_vtable*>(c.vtable)) {
  self_ = create_instance(c, services, params, vt_->create);
  deformable_ = deformable_extension(vt_, self_);
}
OptimizerInstance::~OptimizerInstance() { destroy_instance(*component_, vt_, self_); }

std::optional<DeviceDescription> OptimizerInstance::device_description() const {
  return describe_device(vt_, self_);
}

bool OptimizerInstance::drives_levels() const {
  return (vt_->flags & RP_OPTIMIZER_DRIVES_LEVELS) != 0;
}

void OptimizerInstance::minimize(const rp_objective& objective, double* x, double* f) {
  const rp_status s = call_plugin(*component_, "minimize", [&] { return vt_->minimize(self_, &objective, x, f); });
  if (s != RP_OK) fail(*component_, s, "minimize", vt_->last_error(self_));
}

OptimizerInstance::MeasuredCosts OptimizerInstance::register_deformable(const rp_image& fixed, const rp_image& moving,
                                                                        const rp_image* fixed_mask,
                                                                        const double* initial_matrix, CostInstance& cost,
                                                                        rp_field& forward, rp_field* inverse) {
  if (deformable_ == nullptr)
    fail(*component_, RP_UNSUPPORTED, "register_deformable",
         "the component offers no RP_EXT_DEFORMABLE_OPTIMIZER (abi.h 1.5): it is not a deformable optimizer");
  if (cost.dense_ == nullptr)
    fail(*component_, RP_UNSUPPORTED, "register_deformable",
         (std::string("its cost '") + cost.component().id +
          "' offers no RP_EXT_DENSE_COST (abi.h 1.5): a deformable stage needs a dense-gradient cost")
             .c_str());
  forward.size = sizeof(rp_field);
  if (inverse != nullptr) inverse->size = sizeof(rp_field);
  rp_deformable_problem problem{};
  problem.size = sizeof(problem);
  problem.fixed = &fixed;
  problem.moving = &moving;
  problem.fixed_mask = fixed_mask;
  problem.initial_matrix = initial_matrix;
  problem.cost = cost.self_;
  problem.dense = cost.dense_;
  problem.forward_out = &forward;
  problem.inverse_out = inverse;
  // Where the cost computes: its device-image extension's device, else the one it describes
  // (RP_EXT_DEVICE_INFO: a GPU cost such as cuda.lcc), else -1 (the CPU).
  problem.cost_device = cost.device();
  if (problem.cost_device < 0)
    if (const std::optional<DeviceDescription> d = cost.device_description()) problem.cost_device = d->device;
  MeasuredCosts measured{std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  problem.cost_before_out = &measured.before;
  problem.cost_after_out = &measured.after;
  const rp_status s = call_plugin(*component_, "register_deformable",
                                  [&] { return deformable_->register_deformable(self_, &problem); });
  if (s == RP_OK) return measured;
  // A failing cost's own message names the cause (the optimizer only sees its status).
  std::string message = vt_->last_error(self_);
  const std::string cost_message = cost.vt_->last_error(cost.self_);
  if (!cost_message.empty() && message.find(cost_message) == std::string::npos)
    message += (message.empty() ? "" : ": ") + std::string("cost '") + cost.component().id + "': " + cost_message;
  fail(*component_, s, "register_deformable", message.c_str());
}

// ---- resampler ----
ResamplerInstance::ResamplerInstance(const Component& c, HostServices& services,
                                     const std::map<std::string, ParamValue>& params)
    : component_(&c), vt_(static_cast<const rp_resampler_vtable*>(c.vtable)) {
  self_ = create_instance(c, services, params, vt_->create);
  device_images_ = device_image_extension<rp_resampler_device_image_ext>(vt_, self_);
}
ResamplerInstance::~ResamplerInstance() { destroy_instance(*component_, vt_, self_); }

DeviceImage ResamplerInstance::resample_to_device(const rp_resample_request& request) {
  auto image = std::make_unique<rp_device_image>();
  image->size = sizeof(rp_device_image);
  const rp_status s = call_plugin(*component_, "resample_to_device",
                                  [&] { return device_images_->resample_to_device(self_, &request, image.get()); });
  if (s != RP_OK) fail(*component_, s, "resample_to_device", vt_->last_error(self_));
  const rp_resampler_device_image_ext* ext = device_images_;
  void* self = self_;
  return DeviceImage(image.release(), [ext, self](const rp_device_image* i) {
    ext->release_device_image(self, i->handle);
    delete i;
  });
}

int32_t ResamplerInstance::device() const { return device_images_ ? device_images_->device(self_) : -1; }

TransferCounts ResamplerInstance::transfer_counts() const { return counts_of(device_images_, self_); }

std::optional<DeviceDescription> ResamplerInstance::device_description() const {
  return describe_device(vt_, self_);
}

void ResamplerInstance::resample(const rp_resample_request& request) {
  const rp_status s = call_plugin(*component_, "resample", [&] { return vt_->resample(self_, &request); });
  if (s != RP_OK) fail(*component_, s, "resample", vt_->last_error(self_));
}

}  // namespace regpipe
