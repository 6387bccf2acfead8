// The local window of the neighbourhood correlation, and the window sums of a whole volume:
// (K * v)(x) = sum over y of K(x, y) v(y), K separable, clipped at the grid's faces. K is
// symmetric, so the same sums are also K's adjoint, which the exact CC gradient uses.
#pragma once

#include <regpipe_common/dense_metrics/box_sums.hpp>
#include <regpipe_common/dense_metrics/dense_image.hpp>
#include <regpipe_common/dense_metrics/gaussian_sums.hpp>
#include <regpipe_common/resample_request.hpp>

#include <array>

namespace regpipe_common::dense_metrics {

enum class WindowShape {
  box,      // ANTs' CC: (2r+1)^3 voxels, weight 1
  gaussian  // weight exp(-|d|^2 / 2 sigma^2), d in mm along the axes, cut at 3 sigma per axis
            // (and at the line's length, beyond which no tap can reach)
};

struct LocalWindow {
  WindowShape shape = WindowShape::box;
  std::size_t radius_voxels = 4;  // box: ANTs' CC radius (antsRegistration's CC[...,4])
  double sigma_mm = 2.0;          // gaussian
};

// The window along each axis as taps[|d|], d the offset in voxels: ones for the box.
inline std::array<std::vector<double>, 3> window_taps(const DenseGrid& grid, const LocalWindow& window) {
  std::array<std::vector<double>, 3> taps;
  const int length[3] = {grid.dims.nx, grid.dims.ny, grid.dims.nz};
  for (int a = 0; a < 3; ++a) {
    if (window.shape == WindowShape::box) {
      taps[a].assign(window.radius_voxels + 1, 1.0);
    } else {
      require(std::isfinite(window.sigma_mm) && window.sigma_mm > 0.0, "the Gaussian window's sigma_mm must be positive");
      taps[a] = gaussian_half_kernel(window.sigma_mm / grid.spacing_mm[a], std::size_t(length[a]));
    }
  }
  return taps;
}

// data <- K * data, one axis after the other; each line is computed whole by one thread.
inline void window_sums(const DenseGrid& grid, const LocalWindow& window, std::span<double> data,
                        Execution execution = Execution::parallel) {
  const Grid& g = grid.dims;
  const std::array<std::vector<double>, 3> taps = window_taps(grid, window);
  const std::size_t size[3] = {std::size_t(g.nx), std::size_t(g.ny), std::size_t(g.nz)};
  const std::size_t stride[3] = {1, size[0], size[0] * size[1]};
  const std::size_t n = voxel_count(g);
  for (int a = 0; a < 3; ++a) {
    if (size[a] == 1) continue;
    const std::size_t lines = n / size[a];
    for_each_slab(lines, execution, [&](std::size_t begin, std::size_t end, std::size_t) {
      std::vector<double> in(size[a]), out(size[a]), prefix;
      for (std::size_t line = begin; line < end; ++line) {
        // The line's first voxel: lines enumerate the other two axes, lower one fastest.
        const std::size_t start = a == 0 ? line * size[0]
                                : a == 1 ? line % size[0] + line / size[0] * stride[2]
                                         : line;
        for (std::size_t k = 0; k < size[a]; ++k) in[k] = data[start + k * stride[a]];
        if (window.shape == WindowShape::box) {
          box_sum_line(in.data(), out.data(), size[a], window.radius_voxels, prefix);
        } else {
          tapped_sum_line(in.data(), out.data(), size[a], taps[a]);
        }
        for (std::size_t k = 0; k < size[a]; ++k) data[start + k * stride[a]] = out[k];
      }
    });
  }
}

}  // namespace regpipe_common::dense_metrics
