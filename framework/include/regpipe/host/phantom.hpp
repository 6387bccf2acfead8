// Synthetic data made by the project's own code: the built-in demo needs no downloads and
// the tests get exact ground truth.
#pragma once

#include <regpipe/host/image.hpp>

#include <Eigen/Core>
#include <cstdint>

namespace regpipe {

// A smooth head-like phantom (scalp, skull, CSF, cortex, white matter, ventricles, eyes,
// nose, ear, neck, a deep nucleus and a lesion, placed so that no mirror or 180-degree
// rotation is a symmetry) on a grid of `dims` voxels of `voxel_mm` spacing centred on the
// world origin (LPS axes, identity directions). The head is a fixed object in world mm, about
// 125 x 150 x 145 mm with the neck, so phantoms on different grids are aligned at the
// identity; it fits a 160 mm field of view (40 voxels of 4 mm, 64 of 2.5 mm). Edges are tanh
// ramps about one voxel wide; values lie in 0..1000.
// `contrast` 0 is T1-like; 1 is T2-like: the T1-like image mapped through a fixed
// non-monotonic curve through the tissues (CSF bright, grey above white matter), so the two
// contrasts are related by a function and CR and MI peak exactly at the true alignment on
// the phantom's own grid (resampling to another grid blurs that function: see phantom.cpp).
// Deterministic. Throws UserError for another contrast, a voxel size <= 0 or an empty axis.
Image make_head_phantom(const std::array<uint32_t, 3>& dims, double voxel_mm, int contrast);

// A second contrast of a real image: a fixed non-monotonic intensity mapping of the
// normalised intensities plus Gaussian noise (deterministic for a seed). Exact truth for
// multi-modal tests: the geometry is untouched.
Image synthetic_contrast(const Image& image, uint32_t seed);

// The same voxels with the header moved by a world transform G: new voxel_to_world =
// G * old. For a registration from reference R to this copy, if the original copy was
// aligned with R by T (ref world -> moving world), the truth is G * T.
Image with_world_transform(const Image& image, const Eigen::Matrix4d& g);

}  // namespace regpipe
