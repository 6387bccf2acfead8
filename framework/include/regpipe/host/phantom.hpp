// Synthetic data made by the project's own code: the built-in demo needs no downloads and
// the tests get exact ground truth.
#pragma once

#include <regpipe/host/image.hpp>

#include <Eigen/Core>
#include <cstdint>

namespace regpipe {

// A smooth head-like phantom (skull, grey/white matter-like ellipsoids, ventricles, a few
// asymmetric structures so no rotation is a symmetry) on a grid of `dims` voxels of
// `voxel_mm` spacing, centred on the world origin. `contrast` 0 is T1-like, 1 is T2-like
// (a different, non-monotonic tissue -> intensity mapping).
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
