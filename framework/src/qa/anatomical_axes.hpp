// An image's voxel axes matched to the anatomical axes of the world (LPS: +x left,
// +y posterior, +z superior), so that a picture can walk its voxels in anatomical order
// whatever the storage order: RAS or LPS, axes permuted, or oblique (the closest axes).
#pragma once

#include <regpipe/host/image.hpp>

#include <array>
#include <cstddef>
#include <cstdint>

namespace regpipe {

struct AnatomicalAxes {
  // For world axis w (0 x, 1 y, 2 z): the voxel axis closest to it, whether that voxel axis
  // runs towards -w (right, anterior or inferior), and its voxel count and voxel size.
  std::array<int, 3> voxel_axis{0, 1, 2};
  std::array<bool, 3> reversed{false, false, false};
  std::array<uint32_t, 3> size{0, 0, 0};
  std::array<double, 3> spacing_mm{1, 1, 1};
  std::array<uint32_t, 3> dims{0, 0, 0};  // the image's own

  // The data index of the voxel at anatomical index a, where a[w] counts voxels along +w
  // (from the right, anterior and inferior end).
  size_t data_index(const std::array<uint32_t, 3>& a) const {
    std::array<uint32_t, 3> v{};
    for (int w = 0; w < 3; ++w) v[voxel_axis[w]] = reversed[w] ? size[w] - 1 - a[w] : a[w];
    return v[0] + size_t(dims[0]) * (v[1] + size_t(dims[1]) * v[2]);
  }
};

// The voxel-axis-to-world-axis pairing that maximises the summed |cosine| between each voxel
// axis and its world axis (of the 6 pairings; the first wins a tie, as at exactly 45 degrees).
AnatomicalAxes anatomical_axes(const Image& image);

}  // namespace regpipe
