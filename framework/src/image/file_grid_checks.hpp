// What ITK's ImageIO reports of a file's grid (any format), checked before ITK builds an image
// from it: ITK 5.2 allocates whatever size a header claims (a MetaImage's DimSize product may
// wrap past 2^64, a NRRD may promise terabytes) and inverts the direction matrix with vnl,
// which aborts on NaN or infinity.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace regpipe::image_detail {

// No image's voxel size or world coordinate is a kilometre or more: a header claiming one is
// corrupt, and ITK's SVD of such a matrix may spin for minutes (the image fuzzer's sform of
// 1e20 and 1e31 mm).
constexpr double kFarthestMm = 1e6;

struct FileGrid {
  std::vector<uint64_t> sizes;                 // every axis of the file
  uint64_t bytes_per_voxel = 0;                // as stored
  std::vector<double> spacing, origin;         // per axis
  std::vector<std::vector<double>> direction;  // direction[axis]: that axis's direction
};

// What is wrong with the grid, or nullopt: an axis of size 0, a voxel count past 2^64, a voxel
// size that is not finite and positive, a non-finite origin or direction, parallel axes, or
// more memory than image_memory_budget() to hold the voxels read: the first `read_axes` axes
// (3: one volume of a series).
std::optional<std::string> file_grid_problem(const FileGrid& grid, size_t read_axes);

// The bytes one image read may take: REGPIPE_IMAGE_MEMORY_MB when set, else the memory
// available now (MemAvailable in /proc/meminfo); nullopt when neither is known.
std::optional<uint64_t> image_memory_budget();

}  // namespace regpipe::image_detail
