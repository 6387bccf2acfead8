// The parts of issue 16's known-truth SyN cases that need libregpipe (syn_known_warp.hpp holds
// those on regpipe_common alone): chris_t1 at any voxel size, on the pyramid's isotropic grid
// of that size (anti-aliased as the pyramid does, then trilinear, with regpipe_common's own
// smoothing and warping: no resampler plugin involved), warped by a smooth random
// diffeomorphism of known field; and one registration of a case back through a deformable
// optimizer plugin (RP_EXT_DEFORMABLE_OPTIMIZER) into the figures' SynResult.
#pragma once

#include "support/syn_known_warp.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe_common/fields/abi_views.hpp>
#include <regpipe_common/syn/syn_levels.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>

namespace regpipe::test {

// An image's grid (its voxels may be absent).
inline regpipe_common::FieldGeometry field_geometry_of(const Image& image) {
  regpipe_common::FieldGeometry g{{int(image.dims[0]), int(image.dims[1]), int(image.dims[2])}, {}};
  for (int i = 0; i < 16; ++i) g.voxel_to_world[i] = image.voxel_to_world(i / 4, i % 4);
  return g;
}

// chris_t1 (any image) on the pyramid's `mm` grid.
inline Image chris_t1_level(const Image& t1, double mm) {
  Image level = level_geometry(t1, mm);
  const std::array<double, 3> sigma = pyramid_sigma_mm(t1, mm);  // equal: chris_t1 is isotropic
  const std::vector<float> smooth = regpipe_common::syn::smoothed_image(t1.view(), sigma[0], true);
  rp_image smooth_view = t1.view();
  smooth_view.data = smooth.data();
  const regpipe_common::FieldGeometry grid = field_geometry_of(level);
  level.data = regpipe_common::warp_image(smooth_view, regpipe_common::view_of(regpipe_common::zero_field(grid)),
                                          grid, 0.0f);
  return level;
}

// The image at `path` on its `mm` grid, warped by up to `max_mm` (noise length scale
// `length_scale_voxels` of that grid, random seed `seed`); the figures are measured over the
// head (foreground_threshold).
inline regpipe_common::syn_test::KnownWarp chris_known_warp(const std::filesystem::path& path, double mm,
                                                            double max_mm, double length_scale_voxels,
                                                            std::uint64_t seed) {
  const Image t1 = chris_t1_level(read_image(path), mm);
  return regpipe_common::syn_test::known_warp(field_geometry_of(t1), t1.data, max_mm,
                                              length_scale_voxels, seed, foreground_threshold(t1));
}

// The case's moving image registered onto its fixed one through `optimizer` with `cost`: the
// forward and inverse fields it writes (the rest of the SynResult empty); the wall time in
// *seconds.
inline regpipe_common::syn::SynResult register_known_warp(OptimizerInstance& optimizer, CostInstance& cost,
                                                          const regpipe_common::syn_test::KnownWarp& k,
                                                          double* seconds) {
  regpipe_common::syn::SynResult r;
  r.forward = regpipe_common::zero_field(k.grid);
  r.inverse = regpipe_common::zero_field(k.grid);
  rp_field forward = regpipe_common::field_view(r.forward), inverse = regpipe_common::field_view(r.inverse);
  const rp_image fixed = regpipe_common::syn_test::image_view(k.grid, k.fixed);
  const rp_image moving = regpipe_common::syn_test::image_view(k.grid, k.moving);
  const auto start = std::chrono::steady_clock::now();
  optimizer.register_deformable(fixed, moving, nullptr, nullptr, cost, forward, &inverse);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace regpipe::test
