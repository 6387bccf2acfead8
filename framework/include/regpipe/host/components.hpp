// RAII wrappers around plugin instances. Every failing call throws ComponentError with the
// component id, the status and the plugin's message; nothing else crosses back.
#pragma once

#include <regpipe/abi.h>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <map>
#include <memory>
#include <optional>
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

// An image a resampler made in device memory (RP_EXT_DEVICE_IMAGE, abi.h 1.3), released back
// to it when the last copy goes: drop every copy before the resampler instance.
using DeviceImage = std::shared_ptr<const rp_device_image>;

// Image data copied between host and device (rp_transfer_counts); zeros for a component
// without RP_EXT_DEVICE_IMAGE.
struct TransferCounts {
  uint64_t uploads = 0, upload_bytes = 0, downloads = 0, download_bytes = 0;
};

// The device a component computes on (RP_EXT_DEVICE_INFO, abi.h 1.4), for reports.
struct DeviceDescription {
  int32_t device = -1;
  std::string name;
  int32_t compute_major = 0, compute_minor = 0;
  uint64_t memory_bytes = 0;
  int32_t driver_version = 0, runtime_version = 0;
};

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

  // RP_EXT_DEVICE_IMAGE: null when the component does not offer it (or offers a struct too
  // small for its 1.3 members).
  const rp_cost_device_image_ext* device_images() const { return device_images_; }
  // The image from device memory; throws ComponentError(RP_UNSUPPORTED) where the extension
  // does not take it.
  void set_reference(const rp_device_image& ref);
  void set_moving(const rp_device_image& mov);
  // The extension's device (-1 without it).
  int32_t device() const;

  // RP_EXT_DENSE_COST (abi.h 1.5): whether the component offers it, and one host-memory
  // evaluation (throws ComponentError(RP_UNSUPPORTED) where it is not offered). `request`'s
  // size is set here.
  bool offers_dense() const { return dense_ != nullptr; }
  void evaluate_dense(rp_dense_cost_request request);
  TransferCounts transfer_counts() const;
  // The device it computes on; nothing for a CPU component (no RP_EXT_DEVICE_INFO) or a
  // device that cannot be described.
  std::optional<DeviceDescription> device_description() const;

 private:
  friend class OptimizerInstance;  // register_deformable hands the instance to the optimizer
  void check(rp_status s, const char* what) const;
  const Component* component_;
  const rp_cost_vtable* vt_;
  void* self_ = nullptr;
  const rp_cost_device_image_ext* device_images_ = nullptr;
  const rp_cost_dense_ext* dense_ = nullptr;
};

class OptimizerInstance {
 public:
  OptimizerInstance(const Component& component, HostServices& services,
                    const std::map<std::string, ParamValue>& params);
  ~OptimizerInstance();
  OptimizerInstance(const OptimizerInstance&) = delete;
  OptimizerInstance& operator=(const OptimizerInstance&) = delete;

  bool drives_levels() const;
  // The device it computes on; nothing for a CPU component (no RP_EXT_DEVICE_INFO) or a
  // device that cannot be described.
  std::optional<DeviceDescription> device_description() const;

  // Throws ComponentError (RP_CANCELLED included) on failure.
  void minimize(const rp_objective& objective, double* x, double* f);
  const Component& component() const { return *component_; }

  // RP_EXT_DEFORMABLE_OPTIMIZER (abi.h 1.5): whether the component offers it, and one
  // registration. `fixed`, `moving` and `fixed_mask` (nullable, on the fixed grid) are host
  // images; `initial_matrix` (nullable: identity) is the row-major 4x4 fixed world -> moving
  // world of the affine stage; `cost` must offer RP_EXT_DENSE_COST (ComponentError
  // RP_UNSUPPORTED naming it otherwise). `forward` and `inverse` (nullable) are caller-allocated
  // host fields on the fixed grid (dims, voxel_to_world and vectors set; their size is set
  // here). Throws ComponentError on failure (RP_UNSUPPORTED where the optimizer does not offer
  // the extension, RP_CANCELLED, or the cost's status with the cost's message). Returns the
  // stage's cost before and after as the optimizer measured them (abi.h 1.7's cost_before_out
  // and cost_after_out), NaN where it did not.
  bool offers_deformable() const { return deformable_ != nullptr; }
  struct MeasuredCosts {
    double before, after;
  };
  MeasuredCosts register_deformable(const rp_image& fixed, const rp_image& moving, const rp_image* fixed_mask,
                                    const double* initial_matrix, CostInstance& cost, rp_field& forward,
                                    rp_field* inverse);

 private:
  const Component* component_;
  const rp_optimizer_vtable* vt_;
  void* self_ = nullptr;
  const rp_optimizer_deformable_ext* deformable_ = nullptr;
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

  // RP_EXT_DEVICE_IMAGE, as CostInstance's.
  const rp_resampler_device_image_ext* device_images() const { return device_images_; }
  // The request's output in device memory (its out_data is not read), released back to this
  // instance when the last copy of the result goes.
  DeviceImage resample_to_device(const rp_resample_request& request);
  int32_t device() const;
  TransferCounts transfer_counts() const;
  // The device it computes on; nothing for a CPU component (no RP_EXT_DEVICE_INFO) or a
  // device that cannot be described.
  std::optional<DeviceDescription> device_description() const;

 private:
  const Component* component_;
  const rp_resampler_vtable* vt_;
  void* self_ = nullptr;
  const rp_resampler_device_image_ext* device_images_ = nullptr;
};

}  // namespace regpipe
