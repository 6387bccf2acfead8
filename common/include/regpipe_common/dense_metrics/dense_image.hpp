// What the dense-gradient costs share: the grid, the images on it and the checks.
//
// Conventions of every cost in dense_metrics/ (issue 16, item 2):
//   - fixed F and moving M are float, x fastest (index x + nx (y + ny z)), on ONE grid: M is
//     the moving image already warped (resampled) onto F's grid;
//   - weight (optional, empty = 1 everywhere) is >= 0 per voxel; a 0/1 weight is a mask, and
//     a voxel of weight 0 neither counts in the cost nor gets a gradient;
//   - the cost is lower-is-better, and the gradient is d cost / d u(x): the derivative with
//     respect to the displacement u at voxel x (warped M(x) = M0(x + u(x))), in cost per mm
//     along the grid's x, y, z axes, interleaved as gradient[3 i + axis]. By the chain rule it
//     is (d cost / d M(x)) * grad M(x), so the caller passes grad M, the gradient of the
//     warped moving image in 1/mm along the grid axes (central_difference_gradient in
//     image_gradient.hpp computes one);
//   - sums are double and run over a fixed partition of the voxels combined in order, so
//     every result is bitwise the same serial or parallel, on any number of cores.
#pragma once

#include <regpipe/plugin.hpp>
#include <regpipe_common/execution.hpp>
#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace regpipe_common::dense_metrics {

struct DenseGrid {
  Grid dims;
  double spacing_mm[3] = {1.0, 1.0, 1.0};
};

struct DenseCostInput {
  DenseGrid grid;
  std::span<const float> fixed;
  std::span<const float> moving;
  std::span<const float> weight;           // empty: weight 1 everywhere
  std::span<const float> moving_gradient;  // 3 per voxel, 1/mm; needed only for a gradient
};

using regpipe_common::Execution;

inline double weight_at(const DenseCostInput& in, std::size_t i) {
  return in.weight.empty() ? 1.0 : double(in.weight[i]);
}

inline void require(bool ok, const std::string& message) {
  if (!ok) throw rp::Error(RP_INVALID_ARGUMENT, "dense metric: " + message);
}

// Throws rp::Error(RP_INVALID_ARGUMENT) naming what is wrong. gradient_out may be empty (cost only).
inline void check_input(const DenseCostInput& in, std::span<const double> gradient_out) {
  const Grid& g = in.grid.dims;
  require(g.nx >= 1 && g.ny >= 1 && g.nz >= 1, "grid dimensions must be at least 1");
  for (double s : in.grid.spacing_mm) require(std::isfinite(s) && s > 0.0, "voxel spacing must be positive");
  const std::size_t n = voxel_count(g);
  require(in.fixed.size() == n, "fixed has " + std::to_string(in.fixed.size()) + " values, the grid " + std::to_string(n));
  require(in.moving.size() == n, "moving has " + std::to_string(in.moving.size()) + " values, the grid " + std::to_string(n));
  require(in.weight.empty() || in.weight.size() == n, "weight must be empty or one value per voxel");
  if (gradient_out.empty()) return;
  require(gradient_out.size() == 3 * n, "gradient_out must hold 3 values per voxel");
  require(in.moving_gradient.size() == 3 * n, "moving_gradient must hold 3 values per voxel");
}

// The fixed partition every loop and sum uses: independent of the thread count.
inline std::size_t slab_count(std::size_t items) { return std::min<std::size_t>(items, 64); }

// Calls work(begin, end, slab) for each slab of [0, items).
template <class Work>
void for_each_slab(std::size_t items, Execution execution, const Work& work) {
  const std::size_t slabs = slab_count(items);
  for_each_index(slabs, execution,
                 [&](std::size_t s) { work(slab_begin(items, slabs, s), slab_begin(items, slabs, s + 1), s); });
}

// sum over i in [0, items) of term(i), per slab then in slab order.
template <class Term>
double ordered_sum(std::size_t items, Execution execution, const Term& term) {
  std::vector<double> partial(slab_count(items), 0.0);
  for_each_slab(items, execution, [&](std::size_t begin, std::size_t end, std::size_t s) {
    double sum = 0.0;
    for (std::size_t i = begin; i < end; ++i) sum += term(i);
    partial[s] = sum;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

}  // namespace regpipe_common::dense_metrics
