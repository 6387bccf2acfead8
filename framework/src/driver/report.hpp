// The JSON report of a run: inputs, components, per-stage work, result.
#pragma once

#include <regpipe/host/driver.hpp>

#include <nlohmann/json.hpp>
#include <limits>
#include <optional>

namespace regpipe {

struct RunEvaluation {
  double mean_displacement_mm = 0.0;  // against the pipeline's evaluation.truth
};

// Where one registration's time went, so that throughput numbers say what to speed up.
// NaN: the phase was not reached (an image of a batch that failed earlier).
struct PhaseSeconds {
  static constexpr double kNotReached = std::numeric_limits<double>::quiet_NaN();
  double reading = kNotReached;       // the images read (a batch's image: the moving one)
  double registration = kNotReached;  // pyramid, centre of mass, search
  double writing = kNotReached;       // registered image (resampling included), transforms, QA
};

// The GPU a component ran on (index, name, compute capability, memory, CUDA versions; null:
// the CPU), so that a report says which card gave its times.
nlohmann::json device_json(const std::optional<DeviceDescription>& device);

nlohmann::json make_report(const Pipeline& pipeline, const RegistrationImages& images,
                           const RegistrationResult& result, const Eigen::Matrix4d& fsl_matrix,
                           const std::optional<RunEvaluation>& evaluation, const PhaseSeconds& phases,
                           double total_seconds);

}  // namespace regpipe
