// The JSON report of a run: inputs, components, per-stage work, result.
#pragma once

#include <regpipe/host/driver.hpp>

#include <nlohmann/json.hpp>
#include <optional>

namespace regpipe {

struct RunEvaluation {
  double mean_displacement_mm = 0.0;  // against the pipeline's evaluation.truth
};

nlohmann::json make_report(const Pipeline& pipeline, const RegistrationImages& images,
                           const RegistrationResult& result, const Eigen::Matrix4d& fsl_matrix,
                           const std::optional<RunEvaluation>& evaluation, double total_seconds);

}  // namespace regpipe
