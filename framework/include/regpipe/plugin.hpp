// regpipe/plugin.hpp — optional header-only C++ helpers for plugin authors.
//
// Nothing here is part of the ABI: it only turns C++ classes into the C vtables of abi.h,
// keeps exceptions from crossing the ABI (the RP_GUARD firewall), and reads parameters.
// Needs C++17; no link dependency on libregpipe.
//
//   class MyCost {                       // one instance per rp_cost_vtable::create
//    public:
//     MyCost(const rp_host* host, const rp::Params& p);
//     void set_reference(const rp_image& ref, const rp_image* weight);
//     void set_moving(const rp_image& mov, const rp_image* weight);
//     void evaluate(const rp_cost_request& request);
//   };
//   static const rp_cost_vtable kVtable = rp::cost_vtable<MyCost>();
//
// Throw rp::Error(RP_INVALID_ARGUMENT, "bins=3 is below the minimum 8") for bad input;
// std::bad_alloc becomes RP_OUT_OF_MEMORY, anything else RP_INTERNAL.
#ifndef REGPIPE_PLUGIN_HPP
#define REGPIPE_PLUGIN_HPP

#include <regpipe/abi.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rp {

// An error with an ABI status; what() is the message the host shows.
class Error : public std::runtime_error {
 public:
  Error(rp_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  rp_status status() const noexcept { return status_; }

 private:
  rp_status status_;
};

// Runs `body`, converting every exception into a status and a message (the firewall that
// keeps C++ exceptions from crossing the C ABI).
template <class Body, class OnError>
rp_status guard(Body&& body, OnError&& on_error) noexcept {
  try {
    body();
    return RP_OK;
  } catch (const Error& e) {
    on_error(e.what());
    return e.status();
  } catch (const std::bad_alloc&) {
    on_error("out of host memory");
    return RP_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    on_error(e.what());
    return RP_INTERNAL;
  } catch (...) {
    on_error("unknown internal error");
    return RP_INTERNAL;
  }
}

inline void write_error(rp_error_buf* err, const char* message) noexcept {
  if (err == nullptr || err->size < sizeof(rp_error_buf)) return;
  std::snprintf(err->msg, sizeof(err->msg), "%s", message);
}

// Typed read access to the parameter values handed to `create`.
class Params {
 public:
  Params(const rp_param_value* values, size_t n) : values_(values), n_(n) {}

  const rp_param_value* find(const char* name) const noexcept {
    for (size_t i = 0; i < n_; ++i)
      if (values_[i].name != nullptr && std::strcmp(values_[i].name, name) == 0) return &values_[i];
    return nullptr;
  }
  bool get_bool(const char* name) const { return require(name, RP_PARAM_BOOL).int_value != 0; }
  long long get_int(const char* name) const { return require(name, RP_PARAM_INT).int_value; }
  double get_double(const char* name) const {
    return require(name, RP_PARAM_DOUBLE).double_value;
  }
  std::string get_string(const char* name) const {
    const rp_param_value& v = require_any(name);
    if (v.type != RP_PARAM_ENUM && v.type != RP_PARAM_STRING && v.type != RP_PARAM_PATH)
      throw Error(RP_INVALID_ARGUMENT, std::string("parameter '") + name + "' is not a string");
    return v.string_value != nullptr ? v.string_value : "";
  }
  // A number (RP_PARAM_INT or RP_PARAM_DOUBLE) read as its schema entry `desc` describes it and
  // re-checked as `create` must (abi.h: a host may pass values it did not check): finite and
  // within [desc.min, desc.max].
  double get_number(const rp_param_desc& desc) const {
    const double v = desc.type == RP_PARAM_INT ? double(get_int(desc.name)) : get_double(desc.name);
    if (!std::isfinite(v)) throw Error(RP_INVALID_ARGUMENT, std::string(desc.name) + " is not a finite number");
    check_range(desc.name, v, desc.min, desc.max);
    return v;
  }
  // The same for the entry `name` of a component's schema (`count` entries from `schema`).
  // RP_INTERNAL when it has none: a component reading a parameter it does not publish.
  double get_number(const rp_param_desc* schema, size_t count, const char* name) const {
    for (size_t i = 0; i < count; ++i)
      if (std::strcmp(schema[i].name, name) == 0) return get_number(schema[i]);
    throw Error(RP_INTERNAL, std::string("no parameter ") + name + " in this component's schema");
  }
  // An enum of two choices: false for `first`, true for `second`; any other value is refused.
  bool second_choice(const char* name, const char* first, const char* second) const {
    const std::string v = get_string(name);
    if (v != first && v != second)
      throw Error(RP_INVALID_ARGUMENT, std::string(name) + "=" + v + " is not one of " + first + ", " + second);
    return v == second;
  }
  // Range check for `create`'s own re-validation: names parameter, value and bound.
  static void check_range(const char* name, double value, double lo, double hi) {
    if (value < lo || value > hi)
      throw Error(RP_INVALID_ARGUMENT, std::string(name) + "=" + format(value) +
                                           " is outside [" + format(lo) + ", " + format(hi) + "]");
  }

 private:
  static std::string format(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  const rp_param_value& require_any(const char* name) const {
    const rp_param_value* v = find(name);
    if (v == nullptr) throw Error(RP_INVALID_ARGUMENT, std::string("missing parameter '") + name + "'");
    return *v;
  }
  const rp_param_value& require(const char* name, int32_t type) const {
    const rp_param_value& v = require_any(name);
    if (v.type != type)
      throw Error(RP_INVALID_ARGUMENT, std::string("parameter '") + name + "' has the wrong type");
    return v;
  }
  const rp_param_value* values_;
  size_t n_;
};

// Holder the vtable adapters put around a component instance: the instance plus the
// storage of its last error message.
template <class T>
struct Instance {
  T* object = nullptr;
  std::string last_error;
};

namespace detail {
template <class T>
rp_status create(const rp_host* host, const rp_param_value* params, size_t n, void** self_out,
                 rp_error_buf* err) noexcept {
  if (self_out == nullptr) return RP_INVALID_ARGUMENT;
  *self_out = nullptr;
  Instance<T>* inst = nullptr;
  rp_status s = guard(
      [&] {
        inst = new Instance<T>();
        try {
          inst->object = new T(host, Params(params, n));
        } catch (...) {
          delete inst;
          inst = nullptr;
          throw;
        }
      },
      [&](const char* m) { write_error(err, m); });
  if (s == RP_OK) *self_out = inst;
  return s;
}
template <class T>
Instance<T>* self_of(void* self) {
  return static_cast<Instance<T>*>(self);
}
template <class T, class Body>
rp_status call(void* self, Body&& body) noexcept {
  if (self == nullptr) return RP_INVALID_ARGUMENT;
  Instance<T>* inst = self_of<T>(self);
  inst->last_error.clear();
  return guard([&] { body(*inst->object); },
               [&](const char* m) { inst->last_error = m; });
}
template <class T>
const char* last_error(const void* self) noexcept {
  if (self == nullptr) return "";
  return static_cast<const Instance<T>*>(self)->last_error.c_str();
}
template <class T>
void destroy(void* self) noexcept {
  if (self == nullptr) return;
  Instance<T>* inst = self_of<T>(self);
  delete inst->object;
  delete inst;
}
inline const void* no_extension(void*, const char*) noexcept { return nullptr; }
}  // namespace detail

template <class T>
constexpr rp_cost_vtable cost_vtable() {
  rp_cost_vtable v{};
  v.size = sizeof(rp_cost_vtable);
  v.create = &detail::create<T>;
  v.set_reference = [](void* self, const rp_image* ref, const rp_image* w) noexcept {
    return detail::call<T>(self, [&](T& t) {
      if (ref == nullptr) throw Error(RP_INVALID_ARGUMENT, "reference image is NULL");
      t.set_reference(*ref, w);
    });
  };
  v.set_moving = [](void* self, const rp_image* mov, const rp_image* w) noexcept {
    return detail::call<T>(self, [&](T& t) {
      if (mov == nullptr) throw Error(RP_INVALID_ARGUMENT, "moving image is NULL");
      t.set_moving(*mov, w);
    });
  };
  v.evaluate = [](void* self, const rp_cost_request* req) noexcept {
    return detail::call<T>(self, [&](T& t) {
      if (req == nullptr || req->k == 0 || req->matrices == nullptr || req->costs_out == nullptr)
        throw Error(RP_INVALID_ARGUMENT, "evaluate needs k >= 1, matrices and costs_out");
      t.evaluate(*req);
    });
  };
  v.last_error = &detail::last_error<T>;
  v.destroy = &detail::destroy<T>;
  v.get_extension = &detail::no_extension;
  return v;
}

// `supported_dof`: RP_DOF_* bits of the DOF `minimize` accepts (RP_DOF_ANY: all), declared so
// that the host refuses an unsupported registration.dof while validating the pipeline.
template <class T>
constexpr rp_optimizer_vtable optimizer_vtable(uint32_t flags, uint32_t supported_dof = RP_DOF_ANY) {
  rp_optimizer_vtable v{};
  v.size = sizeof(rp_optimizer_vtable);
  v.flags = flags;
  v.supported_dof = supported_dof;
  v.create = &detail::create<T>;
  v.minimize = [](void* self, const rp_objective* obj, double* x, double* f) noexcept {
    return detail::call<T>(self, [&](T& t) {
      if (obj == nullptr || x == nullptr || f == nullptr)
        throw Error(RP_INVALID_ARGUMENT, "minimize needs an objective, x and f");
      t.minimize(*obj, x, f);
    });
  };
  v.last_error = &detail::last_error<T>;
  v.destroy = &detail::destroy<T>;
  v.get_extension = &detail::no_extension;
  return v;
}

template <class T>
constexpr rp_resampler_vtable resampler_vtable() {
  rp_resampler_vtable v{};
  v.size = sizeof(rp_resampler_vtable);
  v.create = &detail::create<T>;
  v.resample = [](void* self, const rp_resample_request* req) noexcept {
    return detail::call<T>(self, [&](T& t) {
      if (req == nullptr || req->input == nullptr || req->out_data == nullptr)
        throw Error(RP_INVALID_ARGUMENT, "resample needs an input image and out_data");
      t.resample(*req);
    });
  };
  v.last_error = &detail::last_error<T>;
  v.destroy = &detail::destroy<T>;
  v.get_extension = &detail::no_extension;
  return v;
}

// [1.3] RP_EXT_DEVICE_IMAGE (abi.h), with [1.4] RP_EXT_DEVICE_INFO. A resampler T adds
//   int32_t device() const;
//   void resample_to_device(const rp_resample_request& request, rp_device_image& out);
//   void release_device_image(uint64_t handle) noexcept;
//   rp_transfer_counts transfer_counts() const;
// and a cost T adds device() and transfer_counts(), set_moving_device(const rp_device_image&)
// and, with kReferenceOnDevice, set_reference_device(const rp_device_image&); both add
// describe_device(rp_device_info&) const.
namespace detail {
template <class T>
const T& object_of(const void* self) {
  return *static_cast<const Instance<T>*>(self)->object;
}
template <class T>
int32_t device_of(const void* self) noexcept {
  return self == nullptr ? -1 : object_of<T>(self).device();
}
// The members of *out that its size holds, its size kept.
template <class T>
void fill_transfer_counts(const void* self, rp_transfer_counts* out) noexcept {
  if (self == nullptr || out == nullptr) return;
  rp_transfer_counts counts = object_of<T>(self).transfer_counts();
  counts.size = out->size;
  std::memcpy(out, &counts, out->size < sizeof(counts) ? out->size : sizeof(counts));
}
inline void check_device_image(const rp_device_image* image, const char* role) {
  if (image == nullptr || !RP_HAS_MEMBER(image, rp_device_image, handle) || image->data == nullptr)
    throw Error(RP_INVALID_ARGUMENT, std::string(role) + " device image is NULL, too small or without data");
}
template <class T>
inline constexpr rp_resampler_device_image_ext resampler_device_image_ext = {
    sizeof(rp_resampler_device_image_ext), &device_of<T>,
    [](void* self, const rp_resample_request* req, rp_device_image* out) noexcept {
      return call<T>(self, [&](T& t) {
        if (req == nullptr || req->input == nullptr || out == nullptr ||
            !RP_HAS_MEMBER(out, rp_device_image, handle))
          throw Error(RP_INVALID_ARGUMENT, "resample_to_device needs a request with an input and a 1.3 rp_device_image");
        t.resample_to_device(*req, *out);
      });
    },
    [](void* self, uint64_t handle) noexcept {
      if (self != nullptr) self_of<T>(self)->object->release_device_image(handle);
    },
    &fill_transfer_counts<T>};
template <class T, bool kReferenceOnDevice>
rp_status set_reference_device(void* self, const rp_device_image* ref) noexcept {
  return call<T>(self, [&](T& t) {
    check_device_image(ref, "reference");
    if constexpr (kReferenceOnDevice) t.set_reference_device(*ref);
  });
}
template <class T, bool kReferenceOnDevice>
inline constexpr rp_cost_device_image_ext cost_device_image_ext = {
    sizeof(rp_cost_device_image_ext), &device_of<T>,
    kReferenceOnDevice ? &set_reference_device<T, kReferenceOnDevice> : nullptr,
    [](void* self, const rp_device_image* mov) noexcept {
      return call<T>(self, [&](T& t) {
        check_device_image(mov, "moving");
        t.set_moving_device(*mov);
      });
    },
    &fill_transfer_counts<T>};
// [1.4] RP_EXT_DEVICE_INFO: T adds void describe_device(rp_device_info& out) const.
template <class T>
inline constexpr rp_device_info_ext device_info_ext = {
    sizeof(rp_device_info_ext), [](const void* self, rp_device_info* out) noexcept -> rp_status {
      if (self == nullptr || out == nullptr) return RP_INVALID_ARGUMENT;
      try {
        rp_device_info info{};
        object_of<T>(self).describe_device(info);
        info.size = out->size;
        std::memcpy(out, &info, out->size < sizeof(info) ? out->size : sizeof(info));
        return RP_OK;
      } catch (...) {
        return RP_DEVICE;
      }
    }};
// The extensions a device component offers: its device images and its device's description.
template <class T, class DeviceImageExt>
const void* device_extension(const char* id, const DeviceImageExt* device_images) noexcept {
  if (id == nullptr) return nullptr;
  if (std::strcmp(id, RP_EXT_DEVICE_IMAGE) == 0) return device_images;
  if (std::strcmp(id, RP_EXT_DEVICE_INFO) == 0) return &device_info_ext<T>;
  return nullptr;
}
}  // namespace detail

template <class T>
constexpr rp_resampler_vtable resampler_vtable_with_device_images() {
  rp_resampler_vtable v = resampler_vtable<T>();
  v.get_extension = [](void*, const char* id) noexcept -> const void* {
    return detail::device_extension<T>(id, &detail::resampler_device_image_ext<T>);
  };
  return v;
}

// kReferenceOnDevice false: set_reference_device is NULL (the reference comes from host memory).
template <class T, bool kReferenceOnDevice>
constexpr rp_cost_vtable cost_vtable_with_device_images() {
  rp_cost_vtable v = cost_vtable<T>();
  v.get_extension = [](void*, const char* id) noexcept -> const void* {
    return detail::device_extension<T>(id, &detail::cost_device_image_ext<T, kReferenceOnDevice>);
  };
  return v;
}

// [1.5] RP_EXT_DENSE_COST (abi.h): a cost T adds
//   void evaluate_dense(const rp_dense_cost_request& request);
// and offers it with cost_vtable_with_dense<T>(). The request's pointers are checked here.
namespace detail {
template <class T>
inline constexpr rp_cost_dense_ext cost_dense_ext = {
    sizeof(rp_cost_dense_ext), [](void* self, const rp_dense_cost_request* req) noexcept {
      return call<T>(self, [&](T& t) {
        if (req == nullptr || !RP_HAS_MEMBER(req, rp_dense_cost_request, gradient_out))
          throw Error(RP_INVALID_ARGUMENT, "evaluate_dense needs an ABI 1.5 rp_dense_cost_request");
        if (req->fixed == nullptr || req->moving == nullptr || req->cost_out == nullptr)
          throw Error(RP_INVALID_ARGUMENT, "evaluate_dense needs fixed, moving and cost_out");
        if (req->dims[0] == 0 || req->dims[1] == 0 || req->dims[2] == 0)
          throw Error(RP_INVALID_ARGUMENT, "evaluate_dense: a grid dimension is 0");
        t.evaluate_dense(*req);
      });
    }};
}  // namespace detail

template <class T>
constexpr rp_cost_vtable cost_vtable_with_dense() {
  rp_cost_vtable v = cost_vtable<T>();
  v.get_extension = [](void*, const char* id) noexcept -> const void* {
    return id != nullptr && std::strcmp(id, RP_EXT_DENSE_COST) == 0 ? &detail::cost_dense_ext<T>
                                                                     : nullptr;
  };
  return v;
}

// RP_EXT_DENSE_COST with [1.4] RP_EXT_DEVICE_INFO, for a GPU cost: T adds evaluate_dense as
// above and void describe_device(rp_device_info& out) const.
template <class T>
constexpr rp_cost_vtable cost_vtable_with_dense_and_device_info() {
  rp_cost_vtable v = cost_vtable<T>();
  v.get_extension = [](void*, const char* id) noexcept -> const void* {
    if (id == nullptr) return nullptr;
    if (std::strcmp(id, RP_EXT_DENSE_COST) == 0) return &detail::cost_dense_ext<T>;
    if (std::strcmp(id, RP_EXT_DEVICE_INFO) == 0) return &detail::device_info_ext<T>;
    return nullptr;
  };
  return v;
}

// [1.5] RP_EXT_DEFORMABLE_OPTIMIZER (abi.h): an optimizer T adds
//   void register_deformable(const rp_deformable_problem& problem);
// and offers it with optimizer_vtable_with_deformable<T>(flags, supported_dof), otherwise as
// optimizer_vtable<T>. T keeps its minimize; a deformable-only optimizer throws
// rp::Error(RP_UNSUPPORTED, "...") from it. Checked here: an ABI 1.5 problem with fixed,
// moving, cost, a dense extension holding evaluate_dense, and forward_out; the grids, the
// memory and the fields' vectors are T's to check.
namespace detail {
template <class T>
inline constexpr rp_optimizer_deformable_ext optimizer_deformable_ext = {
    sizeof(rp_optimizer_deformable_ext), [](void* self, const rp_deformable_problem* p) noexcept {
      return call<T>(self, [&](T& t) {
        if (p == nullptr || !RP_HAS_MEMBER(p, rp_deformable_problem, inverse_out))
          throw Error(RP_INVALID_ARGUMENT, "register_deformable needs an ABI 1.5 rp_deformable_problem");
        if (p->fixed == nullptr || p->moving == nullptr || p->forward_out == nullptr)
          throw Error(RP_INVALID_ARGUMENT, "register_deformable needs fixed, moving and forward_out");
        if (p->cost == nullptr || p->dense == nullptr || !RP_HAS_MEMBER(p->dense, rp_cost_dense_ext, evaluate_dense) ||
            p->dense->evaluate_dense == nullptr)
          throw Error(RP_INVALID_ARGUMENT,
                      "register_deformable needs a cost instance and its RP_EXT_DENSE_COST extension");
        t.register_deformable(*p);
      });
    }};
}  // namespace detail

template <class T>
constexpr rp_optimizer_vtable optimizer_vtable_with_deformable(uint32_t flags, uint32_t supported_dof = RP_DOF_ANY) {
  rp_optimizer_vtable v = optimizer_vtable<T>(flags, supported_dof);
  v.get_extension = [](void*, const char* id) noexcept -> const void* {
    return id != nullptr && std::strcmp(id, RP_EXT_DEFORMABLE_OPTIMIZER) == 0 ? &detail::optimizer_deformable_ext<T>
                                                                               : nullptr;
  };
  return v;
}

// Throws the objective's failure as an rp::Error (so optimizers can write straight-line code).
inline void check(const rp_objective& obj, rp_status s) {
  if (s != RP_OK) throw Error(s, obj.last_error(obj.ctx));
}

// The checks every optimizer makes of the host's objective before searching: an ABI 1.0
// struct, abi.h's 12-parameter layout, a typical step, and a finite start point.
// `optimizer_id` names the component in the messages.
inline void check_objective(const rp_objective& obj, const double* x, const char* optimizer_id) {
  if (!RP_HAS_MEMBER(&obj, rp_objective, last_error))
    throw Error(RP_INVALID_ARGUMENT, "objective size=" + std::to_string(obj.size) +
                                         " is too small for an ABI 1.0 rp_objective");
  if (obj.param_count != RP_PARAM_COUNT)
    throw Error(RP_INVALID_ARGUMENT, "objective param_count=" + std::to_string(obj.param_count) +
                                         "; " + optimizer_id + " works on abi.h's " +
                                         std::to_string(RP_PARAM_COUNT) + "-parameter affine");
  if (obj.typical_step == nullptr) throw Error(RP_INVALID_ARGUMENT, "objective typical_step is NULL");
  for (size_t i = 0; i < RP_PARAM_COUNT; ++i)
    if (!std::isfinite(x[i])) {
      char value[64];
      std::snprintf(value, sizeof value, "%g", x[i]);
      throw Error(RP_INVALID_ARGUMENT,
                  "start point x[" + std::to_string(i) + "]=" + value + " is not finite");
    }
}

// The free directions of a DOF setting in the 12-parameter space (abi.h's layout).
// 7 DOF ties the three scales into one direction (1,1,1).
inline std::vector<std::array<double, RP_PARAM_COUNT>> dof_basis(unsigned dof) {
  std::vector<std::array<double, RP_PARAM_COUNT>> basis;
  auto unit = [&](std::initializer_list<int> idx) {
    std::array<double, RP_PARAM_COUNT> d{};
    for (int i : idx) d[static_cast<size_t>(i)] = 1.0;
    basis.push_back(d);
  };
  if (dof != 3 && dof != 6 && dof != 7 && dof != 9 && dof != 12)
    throw Error(RP_INVALID_ARGUMENT,
                "dof=" + std::to_string(dof) + " is not one of 3, 6, 7, 9, 12");
  if (dof >= 6)
    for (int i = 0; i < 3; ++i) unit({i});
  for (int i = 3; i < 6; ++i) unit({i});
  if (dof == 7) unit({6, 7, 8});
  if (dof >= 9)
    for (int i = 6; i < 9; ++i) unit({i});
  if (dof == 12)
    for (int i = 9; i < 12; ++i) unit({i});
  return basis;
}

}  // namespace rp

// Defines the exported entry point from a static rp_plugin_entry.
#define RP_DEFINE_PLUGIN_ENTRY(entry_object)                               \
  extern "C" RP_EXPORT const rp_plugin_entry* regpipe_plugin_entry(void) { \
    return &(entry_object);                                                \
  }

#endif  // REGPIPE_PLUGIN_HPP
