// cpu.lcc: ANTs' neighbourhood cross-correlation (CC[fixed, moving, 1, radius]) as a cost:
// under k affine transforms (the moving image resampled onto the reference grid, then the
// window sums of regpipe_common::dense_metrics::local_cc), and as RP_EXT_DENSE_COST with its
// gradient for deformable optimizers.
#pragma once

#include "settings.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/dense_metrics/local_cc.hpp>
#include <regpipe_common/prepared_image.hpp>

#include <optional>

namespace regpipe::cost_cpu {

class LocalCcCost {
 public:
  LocalCcCost(const rp_host* host, const rp::Params& params);

  void set_reference(const rp_image& image, const rp_image* weight);
  void set_moving(const rp_image& image, const rp_image* weight);
  void evaluate(const rp_cost_request& request);
  void evaluate_dense(const rp_dense_cost_request& request);

 private:
  // The cost of one transform; *overlap is the reference weight mapping inside the moving
  // image over the reference's total.
  double evaluate_one(const double matrix[16], double* overlap) const;

  const rp_host* host_;
  regpipe_common::dense_metrics::LocalCcOptions options_;
  regpipe_common::Execution execution_;
  std::optional<regpipe_common::PreparedImage> ref_, mov_;
};

}  // namespace regpipe::cost_cpu
