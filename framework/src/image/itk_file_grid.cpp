#include "image/itk_file_grid.hpp"

#include <itkImageIOBase.h>

namespace regpipe::image_detail {

FileGrid file_grid(const itk::ImageIOBase& io) {
  FileGrid grid;
  grid.bytes_per_voxel = io.GetComponentSize() * io.GetNumberOfComponents();
  for (unsigned d = 0; d < io.GetNumberOfDimensions(); ++d) {
    grid.sizes.push_back(io.GetDimensions(d));
    grid.spacing.push_back(io.GetSpacing(d));
    grid.origin.push_back(io.GetOrigin(d));
    grid.direction.push_back(io.GetDirection(d));
  }
  return grid;
}

}  // namespace regpipe::image_detail
