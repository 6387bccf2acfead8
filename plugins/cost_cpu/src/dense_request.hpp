// RP_EXT_DENSE_COST on the CPU: one ABI request turned into a dense metric's input, and the
// metric's gradient (along the grid's axes) turned into the ABI's (LPS world).
#pragma once

#include <regpipe/plugin.hpp>
#include <regpipe_common/dense_metrics/dense_image.hpp>

#include <span>
#include <vector>

namespace regpipe::cost_cpu {

// The request's images as a dense metric reads them, with what they own.
struct DenseRequestInput {
  regpipe_common::dense_metrics::DenseCostInput input;
  std::vector<float> mask_weight;      // 0/1 from fixed_mask; empty without one
  std::vector<float> moving_gradient;  // 3 per voxel, only when a gradient is asked for
};

// Checks the request (host memory, an invertible finite grid, finite voxels) and builds the
// input; throws rp::Error naming what is wrong (RP_UNSUPPORTED for device memory).
DenseRequestInput dense_request_input(const rp_dense_cost_request& request);

// Writes d cost / d u in LPS world mm from the metric's gradient along the grid's unit axes
// (dense_metrics/world_gradient.hpp).
void write_world_gradient(const rp_dense_cost_request& request, std::span<const double> grid_gradient);

// The whole request: `metric(input, gradient)` returns the cost and fills the grid-axis
// gradient (empty span: the cost alone).
template <class Metric>
void evaluate_dense_request(const rp_dense_cost_request& request, const Metric& metric) {
  const DenseRequestInput in = dense_request_input(request);
  std::vector<double> gradient(request.gradient_out != nullptr ? in.moving_gradient.size() : 0);
  *request.cost_out = metric(in.input, std::span<double>(gradient));
  if (request.gradient_out != nullptr) write_world_gradient(request, gradient);
}

}  // namespace regpipe::cost_cpu
