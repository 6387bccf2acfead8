#include "image/file_grid_checks.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace regpipe::image_detail {
namespace {

// ITK's reader holds the file's voxels in their stored type and converts them to float, then
// regpipe copies them: about the stored size plus two floats per voxel.
constexpr uint64_t kFloatCopies = 2;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g GB", bytes / 1e9);
  return text;
}

std::string sizes_text(const std::vector<uint64_t>& sizes) {
  std::string text;
  for (uint64_t s : sizes) text += (text.empty() ? "" : "x") + std::to_string(s);
  return text;
}

// The product of `count` leading sizes, or nullopt past 2^64.
std::optional<uint64_t> product(const std::vector<uint64_t>& sizes, size_t count) {
  uint64_t total = 1;
  for (size_t d = 0; d < count && d < sizes.size(); ++d)
    if (__builtin_mul_overflow(total, sizes[d], &total)) return std::nullopt;
  return total;
}

std::optional<std::string> geometry_problem(const FileGrid& grid) {
  const size_t axes = grid.sizes.size();
  for (size_t d = 0; d < axes; ++d) {
    const std::string axis = " along axis " + std::to_string(d);
    if (grid.sizes[d] == 0) return "its size" + axis + " is 0";
    // A time axis may have a step of 0 (NIfTI's pixdim[4] of a series without a TR).
    const bool spatial = d < 3;
    if (!std::isfinite(grid.spacing[d]) || (spatial ? grid.spacing[d] <= 0.0 : grid.spacing[d] < 0.0) ||
        (spatial && grid.spacing[d] >= kFarthestMm))
      return "its voxel size" + axis + " is " + number(grid.spacing[d]) + "; voxel sizes are finite and " +
             (spatial ? "positive, below 1e6 mm" : "not negative");
    if (!(std::abs(grid.origin[d]) < kFarthestMm)) return "its origin" + axis + " is " + number(grid.origin[d]) + " mm";
  }
  Eigen::MatrixXd direction(axes, axes);
  for (size_t c = 0; c < axes; ++c)
    for (size_t r = 0; r < axes; ++r) {
      direction(r, c) = grid.direction[c][r];
      if (!std::isfinite(direction(r, c)))
        return "its direction of axis " + std::to_string(c) + " holds " + number(direction(r, c));
    }
  if (axes > 0 && !(std::abs(direction.determinant()) > 1e-12))
    return "its axis directions are parallel or zero (a singular direction matrix)";
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> image_memory_budget() {
  if (const char* limit = std::getenv("REGPIPE_IMAGE_MEMORY_MB")) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(limit, &end, 10);
    if (end != limit && *end == '\0' && mb > 0 && mb < (uint64_t(1) << 44)) return mb << 20;
  }
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream words(line);
    std::string key;
    uint64_t kilobytes = 0;
    if (words >> key >> kilobytes && key == "MemAvailable:") return kilobytes << 10;
  }
  return std::nullopt;
}

std::optional<std::string> file_grid_problem(const FileGrid& grid, size_t read_axes) {
  if (auto problem = geometry_problem(grid)) return problem;
  const std::string sizes = sizes_text(grid.sizes);
  if (!product(grid.sizes, grid.sizes.size()))
    return "its sizes " + sizes + " multiply to more than 2^64 voxels";
  const uint64_t voxels = *product(grid.sizes, read_axes);
  const double bytes = double(voxels) * double(grid.bytes_per_voxel + kFloatCopies * sizeof(float));
  const auto budget = image_memory_budget();
  if (budget && bytes > double(*budget))
    return "its sizes " + sizes + " need about " + gigabytes(bytes) + " of memory to read, more than the " +
           gigabytes(double(*budget)) + " available" +
           (std::getenv("REGPIPE_IMAGE_MEMORY_MB") ? " (REGPIPE_IMAGE_MEMORY_MB)" : "");
  return std::nullopt;
}

}  // namespace regpipe::image_detail
