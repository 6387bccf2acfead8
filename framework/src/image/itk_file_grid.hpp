// The grid an ITK ImageIO read from a file's header, in the form file_grid_checks.hpp checks:
// one reader for images and displacement fields alike.
#pragma once

#include "image/file_grid_checks.hpp"

// Declared, not included: ITK's headers must come after Eigen's in the files that use both.
namespace itk {
class ImageIOBase;
}

namespace regpipe::image_detail {

FileGrid file_grid(const itk::ImageIOBase& io);

}  // namespace regpipe::image_detail
