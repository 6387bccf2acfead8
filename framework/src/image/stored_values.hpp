// Float voxels stored as a file's voxel type: one rule for every writer (ITK's and niftilib's).
#pragma once

#include <regpipe/host/image.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace regpipe::image_detail {

// A float voxel in type T: integers rounded to nearest and clamped to T's range (a registered
// image's B-spline or sinc interpolation overshoots the input's range), NaN as 0.
template <class T>
T stored_value(float v) {
  if constexpr (std::is_floating_point_v<T>) {
    return T(v);
  } else {
    if (std::isnan(v)) return T(0);
    const double r = std::round(double(v));
    if (r <= double(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (r >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(r);
  }
}

template <class T>
void store_values(const std::vector<float>& values, T* out) {
  std::transform(values.begin(), values.end(), out, stored_value<T>);
}

// Calls f(T{}) with the C++ type of `type`.
template <class F>
decltype(auto) with_voxel_type(VoxelType type, F&& f) {
  switch (type) {
    case VoxelType::uint8: return f(uint8_t{});
    case VoxelType::int8: return f(int8_t{});
    case VoxelType::uint16: return f(uint16_t{});
    case VoxelType::int16: return f(int16_t{});
    case VoxelType::uint32: return f(uint32_t{});
    case VoxelType::int32: return f(int32_t{});
    case VoxelType::float32: return f(float{});
    case VoxelType::float64: break;
  }
  return f(double{});
}

}  // namespace regpipe::image_detail
