#include "image_lines.hpp"

#include "parallel_for.hpp"

namespace regpipe::resample {

void for_each_line(const Dims& dims, int axis, unsigned threads,
                   const std::function<bool()>& cancelled,
                   const std::function<void(size_t first, size_t stride, size_t n)>& line) {
  const size_t nx = dims[0], ny = dims[1], nz = dims[2];
  const size_t slice = nx * ny;
  if (axis == 0) {
    parallel_for(nz, threads, cancelled, [&](size_t z) {
      for (size_t y = 0; y < ny; ++y) line(z * slice + y * nx, 1, nx);
    });
  } else if (axis == 1) {
    parallel_for(nz, threads, cancelled, [&](size_t z) {
      for (size_t x = 0; x < nx; ++x) line(z * slice + x, nx, ny);
    });
  } else {
    parallel_for(ny, threads, cancelled, [&](size_t y) {
      for (size_t x = 0; x < nx; ++x) line(y * nx + x, slice, nz);
    });
  }
}

}  // namespace regpipe::resample
