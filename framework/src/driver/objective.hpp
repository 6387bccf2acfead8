// The host's rp_objective: parameter vectors -> matrices -> batched cost evaluations at the
// current pyramid level, with evaluation counting per stage for the report.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/host_services.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace regpipe {

struct LevelImages {
  double level_mm = 0.0;
  Image reference, moving;
  std::optional<Image> reference_weight, moving_weight;
  // Set: the image in device memory (RP_EXT_DEVICE_IMAGE), handed to the cost from there;
  // the Image above is then its grid only.
  DeviceImage reference_device, moving_device;
};

class RegistrationObjective {
 public:
  // level_costs: the cost component of each level (the same one for all, or one per level
  // when their parameters differ, as bins do with registration.bins_per_level).
  // min_overlap: registration.min_overlap, the least fraction of the smaller image that a
  // transform must keep in the overlap to be scored (0: off).
  RegistrationObjective(std::vector<CostInstance*> level_costs, HostServices& services,
                        std::vector<LevelImages> levels, const Eigen::Vector3d& centre,
                        unsigned dof, double radius_mm, double min_overlap = 0.0);

  const rp_objective* abi() const { return &objective_; }
  void set_level(uint32_t level);
  void evaluate(const double* params, size_t k, double* costs);
  // Overlap fraction (abi.h) of one parameter vector at the current level; not counted.
  double overlap(const AffineParams& params);
  // The same as a fraction of the smaller image (what registration.min_overlap bounds).
  double shared_overlap(const AffineParams& params);
  // Closes the current stage and opens a new one named `name` (at the current level).
  void begin_stage(const std::string& name);
  // Closes the current stage; returns all stages recorded.
  std::vector<StageRecord> finish();
  long long evaluations() const { return total_evaluations_; }

 private:
  // Runs fn for a C callback: exceptions become a status, the message goes to last_error.
  template <class Fn>
  rp_status guarded(Fn&& fn) noexcept;
  void update_typical_step();
  void close_stage();
  // At the current level: the cost of a transform that leaves no overlap (abi.h: the
  // measure's worst value) and the factor from the reference's overlap fraction to the
  // fraction of the smaller image.
  void measure_overlap_rule();

  std::vector<CostInstance*> level_costs_;
  CostInstance* cost_ = nullptr;  // the current level's
  HostServices& services_;
  std::vector<LevelImages> levels_;
  std::vector<double> levels_mm_;
  Eigen::Vector3d centre_;
  double radius_mm_;
  std::array<double, RP_PARAM_COUNT> typical_step_{};
  std::optional<uint32_t> current_level_;
  rp_objective objective_{};
  std::string last_error_;
  std::vector<double> matrices_;  // reused batch buffer
  std::vector<double> overlaps_;  // reused batch buffer

  // The minimum-overlap rule (registration.min_overlap), per current level.
  double min_overlap_ = 0.0;
  double no_overlap_cost_ = 0.0;
  double shared_per_reference_ = 1.0;

  std::vector<StageRecord> stages_;
  std::optional<StageRecord> stage_;
  std::chrono::steady_clock::time_point stage_start_;
  long long total_evaluations_ = 0;
};

}  // namespace regpipe
