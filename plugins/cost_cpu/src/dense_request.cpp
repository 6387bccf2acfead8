#include "dense_request.hpp"

#include <regpipe_common/dense_metrics/image_gradient.hpp>
#include <regpipe_common/resample_request.hpp>

#include <array>
#include <cmath>
#include <string>

namespace regpipe::cost_cpu {
namespace {

using regpipe_common::axis_spacing;
using regpipe_common::dense_metrics::DenseGrid;

[[noreturn]] void fail(const std::string& message) {
  throw rp::Error(RP_INVALID_ARGUMENT, "evaluate_dense: " + message);
}

using Matrix3 = std::array<std::array<double, 3>, 3>;

// E^-T of the grid's unit axis directions E (columns), checked finite and invertible: the
// cofactor matrix over the determinant.
Matrix3 inverse_transpose_of_unit_axes(const double voxel_to_world[16]) {
  Matrix3 e{};
  for (int c = 0; c < 3; ++c) {
    const double length = axis_spacing(voxel_to_world, c);
    if (!std::isfinite(length) || !(length > 0.0))
      fail("voxel_to_world axis " + std::to_string(c) + " is not a finite non-zero vector");
    for (int r = 0; r < 3; ++r) e[r][c] = voxel_to_world[4 * r + c] / length;
  }
  Matrix3 cofactor{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      cofactor[r][c] = e[(r + 1) % 3][(c + 1) % 3] * e[(r + 2) % 3][(c + 2) % 3] -
                       e[(r + 1) % 3][(c + 2) % 3] * e[(r + 2) % 3][(c + 1) % 3];
  const double det = e[0][0] * cofactor[0][0] + e[0][1] * cofactor[0][1] + e[0][2] * cofactor[0][2];
  if (!(std::abs(det) > 1e-9)) fail("voxel_to_world is not invertible");
  for (auto& row : cofactor)
    for (double& v : row) v /= det;
  return cofactor;
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
  inverse_transpose_of_unit_axes(request.voxel_to_world);
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
  const Matrix3 to_world = inverse_transpose_of_unit_axes(request.voxel_to_world);
  for (std::size_t i = 0; 3 * i < grid_gradient.size(); ++i) {
    const double* g = &grid_gradient[3 * i];
    for (int r = 0; r < 3; ++r)
      request.gradient_out[3 * i + r] =
          float(to_world[r][0] * g[0] + to_world[r][1] * g[1] + to_world[r][2] * g[2]);
  }
}

}  // namespace regpipe::cost_cpu
