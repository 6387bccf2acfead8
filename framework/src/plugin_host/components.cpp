#include <regpipe/host/components.hpp>

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

template <class CreateFn>
void* create_instance(const Component& c, HostServices& services,
                      const std::map<std::string, ParamValue>& params, CreateFn create) {
  std::vector<rp_param_value> abi = abi_params(params);
  rp_error_buf err{};
  err.size = sizeof(err);
  void* self = nullptr;
  rp_status s = create(services.abi(), abi.data(), abi.size(), &self, &err);
  if (s != RP_OK || self == nullptr) {
    std::string why = err.msg[0] != '\0' ? err.msg : status_name(s);
    throw ComponentError(s == RP_OK ? RP_INTERNAL : s,
                         std::string(kind_name(c.kind)) + " '" + c.id + "': " + why);
  }
  return self;
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
}
CostInstance::~CostInstance() { vt_->destroy(self_); }

void CostInstance::check(rp_status s, const char* what) const {
  if (s != RP_OK) fail(*component_, s, what, vt_->last_error(self_));
}

void CostInstance::set_reference(const Image& ref, const Image* weight) {
  rp_image r = ref.view(), w{};
  if (weight != nullptr) w = weight->view();
  check(vt_->set_reference(self_, &r, weight != nullptr ? &w : nullptr), "set_reference");
}

void CostInstance::set_moving(const Image& mov, const Image* weight) {
  rp_image m = mov.view(), w{};
  if (weight != nullptr) w = weight->view();
  check(vt_->set_moving(self_, &m, weight != nullptr ? &w : nullptr), "set_moving");
}

void CostInstance::evaluate(const double* matrices, size_t k, double* costs, double* overlap) {
  rp_cost_request req{};
  req.size = sizeof(req);
  req.k = k;
  req.matrices = matrices;
  req.costs_out = costs;
  req.overlap_out = overlap;
  check(vt_->evaluate(self_, &req), "evaluate");
}

// ---- optimizer ----
OptimizerInstance::OptimizerInstance(const Component& c, HostServices& services,
                                     const std::map<std::string, ParamValue>& params)
    : component_(&c), vt_(static_cast<const rp_optimizer_vtable*>(c.vtable)) {
  self_ = create_instance(c, services, params, vt_->create);
}
OptimizerInstance::~OptimizerInstance() { vt_->destroy(self_); }

bool OptimizerInstance::drives_levels() const {
  return (vt_->flags & RP_OPTIMIZER_DRIVES_LEVELS) != 0;
}

void OptimizerInstance::minimize(const rp_objective& objective, double* x, double* f) {
  rp_status s = vt_->minimize(self_, &objective, x, f);
  if (s != RP_OK) fail(*component_, s, "minimize", vt_->last_error(self_));
}

// ---- resampler ----
ResamplerInstance::ResamplerInstance(const Component& c, HostServices& services,
                                     const std::map<std::string, ParamValue>& params)
    : component_(&c), vt_(static_cast<const rp_resampler_vtable*>(c.vtable)) {
  self_ = create_instance(c, services, params, vt_->create);
}
ResamplerInstance::~ResamplerInstance() { vt_->destroy(self_); }

void ResamplerInstance::resample(const rp_resample_request& request) {
  rp_status s = vt_->resample(self_, &request);
  if (s != RP_OK) fail(*component_, s, "resample", vt_->last_error(self_));
}

}  // namespace regpipe
