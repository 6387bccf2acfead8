// RAII wrappers around plugin instances. Every failing call throws ComponentError with the
// component id, the status and the plugin's message; nothing else crosses back.
#pragma once

#include <regpipe/abi.h>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <map>
#include <stdexcept>
#include <string>

namespace regpipe {

class ComponentError : public std::runtime_error {
 public:
  ComponentError(rp_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  rp_status status() const { return status_; }

 private:
  rp_status status_;
};

const char* status_name(rp_status status);

class CostInstance {
 public:
  CostInstance(const Component& component, HostServices& services,
               const std::map<std::string, ParamValue>& params);
  ~CostInstance();
  CostInstance(const CostInstance&) = delete;
  CostInstance& operator=(const CostInstance&) = delete;

  void set_reference(const Image& ref, const Image* weight);
  void set_moving(const Image& mov, const Image* weight);
  // k row-major 4x4 matrices (reference world -> moving world); overlap may be null.
  void evaluate(const double* matrices, size_t k, double* costs, double* overlap = nullptr);
  const Component& component() const { return *component_; }

 private:
  void check(rp_status s, const char* what) const;
  const Component* component_;
  const rp_cost_vtable* vt_;
  void* self_ = nullptr;
};

class OptimizerInstance {
 public:
  OptimizerInstance(const Component& component, HostServices& services,
                    const std::map<std::string, ParamValue>& params);
  ~OptimizerInstance();
  OptimizerInstance(const OptimizerInstance&) = delete;
  OptimizerInstance& operator=(const OptimizerInstance&) = delete;

  bool drives_levels() const;
  // Throws ComponentError (RP_CANCELLED included) on failure.
  void minimize(const rp_objective& objective, double* x, double* f);
  const Component& component() const { return *component_; }

 private:
  const Component* component_;
  const rp_optimizer_vtable* vt_;
  void* self_ = nullptr;
};

class ResamplerInstance {
 public:
  ResamplerInstance(const Component& component, HostServices& services,
                    const std::map<std::string, ParamValue>& params);
  ~ResamplerInstance();
  ResamplerInstance(const ResamplerInstance&) = delete;
  ResamplerInstance& operator=(const ResamplerInstance&) = delete;

  void resample(const rp_resample_request& request);
  const Component& component() const { return *component_; }

 private:
  const Component* component_;
  const rp_resampler_vtable* vt_;
  void* self_ = nullptr;
};

}  // namespace regpipe
