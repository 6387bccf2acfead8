// The QA picture of a registration: the reference's edges in colour over the registered
// moving image, in three orthogonal mid slices side by side (axial, coronal, sagittal).
// Misalignment shows as edges that do not sit on the moving image's boundaries.
#pragma once

#include <regpipe/host/image.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace regpipe {

struct RgbPicture {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes per pixel, rows top to bottom
  std::array<uint8_t, 3> at(uint32_t x, uint32_t y) const {
    const size_t i = 3 * (size_t(y) * width + x);
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

// The colour of reference edges in the picture.
constexpr std::array<uint8_t, 3> kQaEdgeColour{255, 40, 40};

// Which reference voxels are edges: gradient magnitude (per mm) above half its 99th
// percentile over the image, so the threshold follows the image's contrast. x fastest.
std::vector<uint8_t> reference_edges(const Image& reference);

// Slices through the middle voxel of each axis, in voxel order: axial (x right, y down),
// coronal and sagittal (z up), placed left to right, in square pixels of the finest voxel
// size s: with n_a = round(dims_a * spacing_a / s) the picture is (2 n_x + n_y) x
// max(n_y, n_z) pixels (dims for isotropic voxels), black where a slice is shorter. The
// moving image is grey from 0 to its 99th percentile. Throws UserError unless both images
// share a grid.
RgbPicture make_qa_picture(const Image& reference, const Image& registered);

// PNG through ITK's PNG IO, written atomically. Throws UserError naming the path.
void write_png(const RgbPicture& picture, const std::filesystem::path& path);
RgbPicture read_png(const std::filesystem::path& path);

}  // namespace regpipe
