#include "dense_request.hpp"

#include <regpipe_common/dense_metrics/image_gradient.hpp>
#include <regpipe_common/dense_metrics/world_gradient.hpp>
#include <regpipe_common/resample_request.hpp>

#include <cmath>
#include <string>

namespace regpipe::cost_cpu {
namespace {

using regpipe_common::dense_metrics::DenseGrid;
using regpipe_common::dense_metrics::unit_axes_inverse_transpose;

[[noreturn]] void fail(const std::string& message) {
  throw rp::Error(RP_INVALID_ARGUMENT, "evaluate_dense: " + message);
}

void require_finite(const float* values, std::size_t n, const char* role) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(values[i]))
      fail(std::string(role) + " voxel " + std::to_string(i) + " is not finite");
}

}  // namespace

DenseRequestInput dense_request_input(const rp_dense_cost_request& request) {
  if (request.memory != RP_MEMORY_HOST)
    throw rp::Error(RP_UNSUPPORTED,
                    "evaluate_dense: this CPU cost takes images in host memory (RP_MEMORY_HOST)");
  unit_axes_inverse_transpose(request.voxel_to_world);  // a bad grid is refused before any work
  DenseGrid grid;
  grid.dims = {int(request.dims[0]), int(request.dims[1]), int(request.dims[2])};
  for (int a = 0; a < 3; ++a)
    grid.spacing_mm[a] = regpipe_common::axis_spacing(request.voxel_to_world, a);
  const std::size_t n = regpipe_common::voxel_count(grid.dims);
  require_finite(request.fixed, n, "fixed");
  require_finite(request.moving, n, "moving");

  DenseRequestInput in;
  if (request.fixed_mask != nullptr) {
    in.mask_weight.resize(n);
    for (std::size_t i = 0; i < n; ++i) in.mask_weight[i] = request.fixed_mask[i] > 0.f ? 1.f : 0.f;
  }
  const std::span<const float> moving(request.moving, n);
  if (request.gradient_out != nullptr)
    in.moving_gradient = regpipe_common::dense_metrics::central_difference_gradient(grid, moving);
  in.input = {grid, std::span<const float>(request.fixed, n), moving, in.mask_weight,
              in.moving_gradient};
  return in;
}

void write_world_gradient(const rp_dense_cost_request& request, std::span<const double> grid_gradient) {
  regpipe_common::dense_metrics::grid_gradient_to_world(
      request.voxel_to_world, grid_gradient, std::span<float>(request.gradient_out, grid_gradient.size()));
}

}  // namespace regpipe::cost_cpu
