// PNG files through ITK's PNG IO (RGB, 8 bits per channel).
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/qa_picture.hpp>

// As in image_io.cpp: ITK's bundled Eigen and the system Eigen that image.hpp brings in
// cannot meet in one translation unit; point ITK at the system copy.
#define ITK_USE_SYSTEM_EIGEN
#include <itkImage.h>
#include <itkImageFileReader.h>
#include <itkImageFileWriter.h>
#include <itkPNGImageIO.h>
#include <itkRGBPixel.h>

#include <algorithm>

namespace regpipe {
namespace {
using RgbImage = itk::Image<itk::RGBPixel<unsigned char>, 2>;
}  // namespace

void write_png(const RgbPicture& picture, const std::filesystem::path& path) {
  prepare_image_io();  // ITK's globals, made once before any thread's first ITK object
  auto image = RgbImage::New();
  RgbImage::RegionType region;
  region.SetSize({picture.width, picture.height});
  image->SetRegions(region);
  image->Allocate();
  auto* pixels = reinterpret_cast<unsigned char*>(image->GetBufferPointer());
  std::copy(picture.rgb.begin(), picture.rgb.end(), pixels);  // row-major, x fastest: ITK's order
  write_atomically(path, [&](const std::filesystem::path& tmp) {
    auto writer = itk::ImageFileWriter<RgbImage>::New();
    writer->SetImageIO(itk::PNGImageIO::New());
    writer->SetFileName(tmp.string());
    writer->SetInput(image);
    try {
      writer->Update();
    } catch (const itk::ExceptionObject& e) {
      throw UserError(path.string() + ": cannot write the PNG: " + e.GetDescription());
    }
  });
}

RgbPicture read_png(const std::filesystem::path& path) {
  prepare_image_io();
  auto reader = itk::ImageFileReader<RgbImage>::New();
  reader->SetImageIO(itk::PNGImageIO::New());
  reader->SetFileName(path.string());
  try {
    reader->Update();
  } catch (const itk::ExceptionObject& e) {
    throw UserError(path.string() + ": cannot read the PNG: " + e.GetDescription());
  }
  const RgbImage* image = reader->GetOutput();
  const auto size = image->GetLargestPossibleRegion().GetSize();
  RgbPicture picture;
  picture.width = uint32_t(size[0]);
  picture.height = uint32_t(size[1]);
  const auto* pixels = reinterpret_cast<const unsigned char*>(image->GetBufferPointer());
  picture.rgb.assign(pixels, pixels + size_t(picture.width) * picture.height * 3);
  return picture;
}

}  // namespace regpipe
