// Image files through ITK. The only file that includes ITK headers: everything else sees
// regpipe::Image (float32, voxel -> LPS world), which is also ITK's physical frame; files
// are written in the voxel type the caller asks for.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/input_file.hpp>

#include "image/data_completeness.hpp"
#include "image/decompressed_file.hpp"
#include "image/file_names.hpp"
#include "image/file_grid_checks.hpp"
#include "image/itk_file_grid.hpp"
#include "image/itk_form_nifti.hpp"
#include "image/metaimage_header_checks.hpp"
#include "image/nifti_header.hpp"
#include "image/nifti_header_checks.hpp"
#include "image/nifti_voxels.hpp"
#include "image/raw_nifti_header.hpp"
#include "io/itk_message.hpp"
#include "image/stored_values.hpp"

// Debian's ITK 5.2 bundles Eigen 3.3 under the same include guards and namespace as the
// system Eigen 3.4 that image.hpp brings in; the two cannot meet in one translation unit.
// ITK headers use Eigen only in templates instantiated here, so point them at the system copy.
#define ITK_USE_SYSTEM_EIGEN
#include <itkExtractImageFilter.h>
#include <itkImageFileReader.h>
#include <itkImageFileWriter.h>
#include <itkImageIOFactory.h>
#include <itkMetaImageIO.h>
#include <itkMetaImageIOFactory.h>
#include <itkMultiThreaderBase.h>
#include <itkNiftiImageIO.h>
#include <itkNiftiImageIOFactory.h>
#include <itkNrrdImageIOFactory.h>
#include <itkOutputWindow.h>
#include <itkSingleton.h>
#include <itkTimeStamp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <future>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

using Volume = itk::Image<float, 3>;
using Series = itk::Image<float, 4>;

constexpr const char* kReadableFormats = ".nii, .nii.gz, .hdr/.img, .mha, .mhd, .nrrd or .nhdr";
constexpr const char* kWritableFormats = ".nii.gz, .nii, .hdr (with its .img), .mha or .nrrd";

// ITK 5.2 creates its process-wide globals lazily and without a lock: the SingletonIndex
// (a plain map every global is registered in), the thread pool, the multi-threader defaults,
// the time stamp counter and the global flags. Two threads that make their first reader at
// once both create them: a corrupted map, a second thread pool, a double free at exit (4% of
// runs read their two images so). Every global a read or write reaches is created here, on
// one thread, before any reading or writing thread starts; afterwards ITK only reads them.
void create_itk_globals() {
  itk::SingletonIndex::GetInstance();
  // ITK warnings go straight to stderr in its own format; every problem that matters
  // here surfaces as an exception and becomes a UserError with the file name.
  itk::Object::GlobalWarningDisplayOff();
  itk::DataObject::GetGlobalReleaseDataFlag();
  itk::TimeStamp().Modified();
  itk::OutputWindow::GetInstance();
  itk::MultiThreaderBase::GetGlobalMaximumNumberOfThreads();
  itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads();
  itk::MultiThreaderBase::GetGlobalDefaultThreader();
  itk::MetaImageIO::GetDefaultDoublePrecision();
  // A process object makes its multi-threader, and the default (pool) threader the pool.
  itk::ImageFileReader<Volume>::New();
}

// The CMake link of ITK does not register IO factories by itself (no ITK_USE_FILE), so
// the formats regpipe supports are registered here, once, with ITK's globals.
void register_formats() {
  static std::once_flag once;
  std::call_once(once, [] {
    create_itk_globals();
    itk::NiftiImageIOFactory::RegisterOneFactory();
    itk::NrrdImageIOFactory::RegisterOneFactory();
    itk::MetaImageIOFactory::RegisterOneFactory();
  });
}

// ITK 5.2's NiftiImageIO::ReadImageInformation keeps the last file name in a function-static
// std::string that it assigns on every call, and its constructor sets niftilib's global debug
// level: two threads reading headers at once corrupt the heap (a crash while reading, or a
// double free at exit). Making an ImageIO and reading a header (microseconds; a .nii.gz's
// header is its first block) hold header_mutex; decompressing the voxels, the slow part, does not.
using image_detail::header_mutex;

itk::ImageIOBase::Pointer create_image_io(const fs::path& path, itk::IOFileModeEnum mode) {
  std::lock_guard<std::mutex> lock(header_mutex());
  return itk::ImageIOFactory::CreateImageIO(path.c_str(), mode);
}

// The words of an ITK exception that explain, on one line.
std::string reason_of(const itk::ExceptionObject& e) {
  const std::string text = readable_itk_description(e.GetDescription());
  return text.empty() ? "ITK could not read it" : text;
}

UserError read_error(const fs::path& path, const std::string& reason) {
  return UserError("cannot read image '" + path.string() + "': " + reason);
}

// Runs `read` (ITK reading `path`) and turns what escapes it into a UserError naming the file:
// ITK's exceptions, and the standard library's that ITK 5.2 lets out on some malformed headers
// (std::length_error from a MetaImage ElementDataFile pattern). Out of memory stays what it is.
template <class Read>
auto reading_with_itk(const fs::path& path, Read&& read) {
  try {
    return read();
  } catch (const itk::ExceptionObject& e) {
    throw read_error(path, reason_of(e));
  } catch (const UserError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw read_error(path, std::string("ITK's reader failed on it (") + e.what() + ")");
  }
}

itk::ImageIOBase::Pointer open_for_reading(const fs::path& path) {
  std::error_code ec;
  // A FIFO or a device would block the reader or never end.
  if (const auto problem = input_file_problem(path)) throw read_error(path, *problem);
  if (const auto problem = image_detail::nifti_header_problem(path)) throw read_error(path, *problem);
  if (const auto problem = image_detail::metaimage_header_problem(path)) throw read_error(path, *problem);
  itk::ImageIOBase::Pointer io = create_image_io(path, itk::IOFileModeEnum::ReadMode);
  if (!io)
    throw read_error(
        path, "not a readable image in a supported format (" + std::string(kReadableFormats) + ")");
  // Legacy Analyze 7.5 has no reliable orientation: read it the way FSL does, since the
  // transforms we write follow FSL's conventions.
  if (auto* nifti = dynamic_cast<itk::NiftiImageIO*>(io.GetPointer()))
    nifti->SetLegacyAnalyze75Mode(itk::NiftiImageIOEnums::Analyze75Flavor::AnalyzeFSL);
  io->SetFileName(path.string());
  reading_with_itk(path, [&] {
    std::lock_guard<std::mutex> lock(header_mutex());
    try {
      io->ReadImageInformation();
    } catch (const itk::ExceptionObject&) {
      // ITK 5.2 reports a MetaImage header that MetaIO cannot parse as "File cannot be read ...
      // Reason: <the last system error>", a stale errno ("No such file or directory").
      if (dynamic_cast<itk::MetaImageIO*>(io.GetPointer()))
        throw read_error(path, "its MetaImage header is malformed (MetaIO cannot parse it; its "
                               "complaint is printed above)");
      throw;
    }
  });
  return io;
}

void require_scalar_pixels(const itk::ImageIOBase& io, const fs::path& path) {
  if (io.GetPixelType() != itk::IOPixelEnum::SCALAR || io.GetNumberOfComponents() != 1)
    throw read_error(path, "pixels are " +
                               itk::ImageIOBase::GetPixelTypeAsString(io.GetPixelType()) +
                               " with " + std::to_string(io.GetNumberOfComponents()) +
                               " components; only scalar (grey-level) images are supported");
  if (io.GetComponentType() == itk::IOComponentEnum::UNKNOWNCOMPONENTTYPE)
    throw read_error(path, "unknown voxel data type");
}

// Before ITK allocates the voxels or inverts the direction: `read_axes` of the file's axes
// are read (3: one volume of a series).
void require_sane_grid(const itk::ImageIOBase& io, const fs::path& path, size_t read_axes) {
  if (const auto problem = image_detail::file_grid_problem(image_detail::file_grid(io), read_axes))
    throw read_error(path, *problem);
}

// Sizes along each file axis with trailing length-1 axes dropped, but never fewer than the
// three spatial axes a volume has (a single-slice 3D file stays 3D).
std::vector<size_t> significant_sizes(const itk::ImageIOBase& io) {
  std::vector<size_t> sizes;
  for (unsigned d = 0; d < io.GetNumberOfDimensions(); ++d) sizes.push_back(io.GetDimensions(d));
  while (sizes.size() > 3 && sizes.back() == 1) sizes.pop_back();
  return sizes;
}

std::string join_sizes(const std::vector<size_t>& sizes) {
  std::string text;
  for (size_t s : sizes) text += (text.empty() ? "" : "x") + std::to_string(s);
  return text;
}

// A reader's header pass (it reads the header again through its ImageIO).
template <class Reader>
void update_output_information(Reader& reader) {
  std::lock_guard<std::mutex> lock(header_mutex());
  reader.UpdateOutputInformation();
}

Volume::Pointer read_volume(const itk::ImageIOBase::Pointer& io, const fs::path& path) {
  auto reader = itk::ImageFileReader<Volume>::New();
  reader->SetImageIO(io);
  reader->SetFileName(path.string());
  update_output_information(*reader);
  reader->Update();  // the header is read: only the voxels now
  return reader->GetOutput();
}

Volume::Pointer extract_volume(Series* series, unsigned volume) {
  Series::RegionType region = series->GetLargestPossibleRegion();
  region.SetIndex(3, region.GetIndex(3) + volume);
  region.SetSize(3, 0);  // size 0 collapses the axis: the output is 3D
  auto extract = itk::ExtractImageFilter<Series, Volume>::New();
  extract->SetInput(series);
  extract->SetExtractionRegion(region);
  extract->SetDirectionCollapseToSubmatrix();
  extract->Update();
  return extract->GetOutput();
}

itk::ImageFileReader<Series>::Pointer series_reader(const itk::ImageIOBase::Pointer& io,
                                                    const fs::path& path) {
  auto reader = itk::ImageFileReader<Series>::New();
  reader->SetImageIO(io);
  reader->SetFileName(path.string());
  update_output_information(*reader);
  return reader;
}

Volume::Pointer read_one_volume_of_series(const itk::ImageIOBase::Pointer& io, const fs::path& path,
                                          unsigned volume) {
  return extract_volume(series_reader(io, path)->GetOutput(), volume);
}

// The type the file stores. ITK's NIfTI reader already reports a file whose scl_slope /
// scl_inter scale its integers as float (the scaled values are not integers).
VoxelType file_type_of(const itk::ImageIOBase& io) {
  using C = itk::IOComponentEnum;
  switch (io.GetComponentType()) {
    case C::UCHAR: return VoxelType::uint8;
    case C::CHAR: return VoxelType::int8;
    case C::USHORT: return VoxelType::uint16;
    case C::SHORT: return VoxelType::int16;
    case C::UINT: return sizeof(unsigned) == 4 ? VoxelType::uint32 : VoxelType::float64;
    case C::INT: return sizeof(int) == 4 ? VoxelType::int32 : VoxelType::float64;
    case C::FLOAT: return VoxelType::float32;
    default: return VoxelType::float64;  // double and 64-bit integers
  }
}

// The image's grid (no voxels) as ITK places it.
Image grid_of(const Volume& volume, const fs::path& path) {
  Image image;
  const auto size = volume.GetLargestPossibleRegion().GetSize();
  for (unsigned d = 0; d < 3; ++d) {
    if (size[d] == 0 || size[d] > std::numeric_limits<uint32_t>::max())
      throw read_error(path, "image size " + std::to_string(size[d]) + " along axis " +
                                 std::to_string(d) + " is not usable");
    image.dims[d] = static_cast<uint32_t>(size[d]);
  }
  for (unsigned r = 0; r < 3; ++r) {
    for (unsigned c = 0; c < 3; ++c)
      image.voxel_to_world(r, c) = volume.GetDirection()(r, c) * volume.GetSpacing()[c];
    image.voxel_to_world(r, 3) = volume.GetOrigin()[r];
  }
  if (!(std::abs(image.voxel_to_world.topLeftCorner<3, 3>().determinant()) > 0.0))
    throw read_error(path,
                     "its voxel-to-world matrix is singular (a voxel size or direction is 0)");
  return image;
}

Image to_image(const Volume& volume, const fs::path& path) {
  Image image = grid_of(volume, path);
  const float* buffer = volume.GetBufferPointer();
  image.data.assign(buffer, buffer + image.voxel_count());
  return image;
}

template <class T>
typename itk::Image<T, 3>::Pointer to_itk(const Image& image, const image_detail::ItkGrid& grid) {
  using Out = itk::Image<T, 3>;
  auto volume = Out::New();
  typename Out::RegionType region;
  typename Out::SpacingType itk_spacing;
  typename Out::PointType origin;
  typename Out::DirectionType itk_direction;
  for (unsigned r = 0; r < 3; ++r) {
    region.SetSize(r, grid.dims[r]);
    itk_spacing[r] = grid.spacing[r];
    origin[r] = grid.origin[r];
    for (unsigned c = 0; c < 3; ++c) itk_direction(r, c) = grid.direction(r, c);
  }
  volume->SetRegions(region);
  volume->SetSpacing(itk_spacing);
  volume->SetOrigin(origin);
  volume->SetDirection(itk_direction);
  volume->Allocate();
  image_detail::store_values(image.data, volume->GetBufferPointer());
  return volume;
}

// Files that the written file brings along; the header-plus-data formats that name their
// data file inside the header (.mhd, .nhdr) cannot be renamed into place and are refused.
std::vector<std::string> companions_for_writing(const fs::path& path) {
  const std::string extension = image_detail::lowercase(full_extension(path));
  if (extension == ".nii.gz" || extension == ".nii" || extension == ".mha" || extension == ".nrrd")
    return {};
  if (extension == ".hdr") return {full_extension(path) == ".HDR" ? ".IMG" : ".img"};
  throw UserError("cannot write '" + path.string() + "': unsupported output format '" + extension +
                  "'; use " + kWritableFormats);
}

}  // namespace

// The NIfTI standard's choice of matrix (FSL and nibabel read so), where ITK 5.2 takes the
// qform: an sform-edited file would otherwise sit where its qform says, silently. Where the
// two forms agree to float rounding ITK's reading stays, with its exactly orthonormal axes.
void image_detail::apply_nifti_header(Image& image, const fs::path& path) {
  image.nifti = image_detail::read_nifti_header(path);
  if (!image.nifti || image.nifti->sform_code <= 0) return;
  const NiftiHeader& h = *image.nifti;
  const double apart = image_detail::corner_distance_mm(h.qform_ras, h.sform_ras, image.dims);
  if (h.qform_code > 0 && apart <= image_detail::kSameGridMm) return;
  const Eigen::Matrix4d sform_lps = Eigen::Vector4d(-1.0, -1.0, 1.0, 1.0).asDiagonal() * h.sform_ras;
  if (!sform_lps.allFinite() || !(std::abs(sform_lps.topLeftCorner<3, 3>().determinant()) > 0.0))
    throw read_error(path, "its sform (sform_code " + std::to_string(h.sform_code) +
                               ") is singular or not finite");
  image.voxel_to_world = sform_lps;
  if (h.qform_code > 0 && apart > 0.01) {
    char mm[32];
    std::snprintf(mm, sizeof(mm), "%.3g", apart);
    write_log_line(RP_LOG_WARNING,
                   "'" + path.string() + "': its sform and qform place the image up to " + mm +
                       " mm apart; regpipe uses the sform (sform_code " + std::to_string(h.sform_code) +
                       "), as the NIfTI standard, FSL and nibabel do");
  }
}

namespace {

struct OpenedImage {
  itk::ImageIOBase::Pointer io;
  unsigned volume;  // the volume to read
};

// Everything read_image checks from the header alone.
OpenedImage open_checked(const fs::path& path, const ReadOptions& options) {
  register_formats();
  const itk::ImageIOBase::Pointer io = open_for_reading(path);
  require_scalar_pixels(*io, path);
  require_sane_grid(*io, path, 3);
  const std::vector<size_t> sizes = significant_sizes(*io);
  if (sizes.size() < 3)
    throw read_error(path, "it is a " + std::to_string(sizes.size()) + "D image (" +
                               join_sizes(sizes) + "); regpipe registers 3D volumes");
  if (sizes.size() > 4)
    throw read_error(path, "it is a " + std::to_string(sizes.size()) + "D image (" +
                               join_sizes(sizes) +
                               "); only 3D volumes and 4D series of volumes are supported");
  const size_t volumes = sizes.size() == 4 ? sizes[3] : 1;
  if (volumes > 1 && !options.volume_index)
    throw read_error(
        path, "4D image with " + std::to_string(volumes) +
                  " volumes; set a volume index (inputs.<x>_volume, e.g. inputs.moving_volume: 0)");
  const unsigned volume = options.volume_index.value_or(0);
  if (volume >= volumes)
    throw read_error(path, "volume index " + std::to_string(volume) +
                               " is out of range: the file has " + std::to_string(volumes) +
                               (volumes == 1 ? " volume" : " volumes") + " (indices 0.." +
                               std::to_string(volumes - 1) + ")");
  return {io, volume};
}

}  // namespace

void check_image_header(const fs::path& path, const ReadOptions& options) { open_checked(path, options); }

Eigen::Vector3d header_voxel_size_mm(const fs::path& path, const ReadOptions& options) {
  const OpenedImage opened = open_checked(path, options);
  return {opened.io->GetSpacing(0), opened.io->GetSpacing(1), opened.io->GetSpacing(2)};
}

// A 3D single-file NIfTI decompressed once (libdeflate), checked for completeness and decoded
// from memory, where ITK would decompress it a second time: ITK reads the header and places
// the grid as before. Nothing where the file is not one decode_nifti_voxels takes.
std::optional<Image> read_nifti_in_one_pass(const OpenedImage& opened, const fs::path& path) {
  const itk::ImageIOBase::Pointer& io = opened.io;
  if (!dynamic_cast<itk::NiftiImageIO*>(io.GetPointer()) || !image_detail::is_single_nifti_name(path) ||
      io->GetNumberOfDimensions() != 3)
    return std::nullopt;
  // The voxels' float storage is made (its pages faulted in) while the file inflates, where
  // the file can hold what its header promises (DEFLATE inflates at most 1032:1): a hostile
  // header is not to make this allocate.
  std::error_code ec;
  const uintmax_t file_bytes = fs::file_size(path, ec);
  const bool plausible = !ec && uint64_t(io->GetImageSizeInBytes()) <= 1032 * uint64_t(file_bytes);
  std::future<std::vector<float>> storage =
      std::async(plausible ? std::launch::async : std::launch::deferred,
                 [count = plausible ? io->GetImageSizeInPixels() : 0] { return std::vector<float>(count); });
  const auto contents = image_detail::read_decompressed(path, io->GetImageSizeInBytes() + 352);
  if (!contents) return std::nullopt;  // unreadable: ITK names the problem
  if (const auto reason = image_detail::incomplete_data_reason(path, *contents)) throw read_error(path, *reason);
  return reading_with_itk(path, [&]() -> std::optional<Image> {
    auto reader = itk::ImageFileReader<Volume>::New();
    reader->SetImageIO(io);
    reader->SetFileName(path.string());
    update_output_information(*reader);
    Image image = grid_of(*reader->GetOutput(), path);
    auto voxels = image_detail::decode_nifti_voxels(*contents, image.voxel_count(), storage.get());
    if (!voxels) return std::nullopt;
    image.data = std::move(*voxels);
    image.file_type = file_type_of(*io);
    image_detail::apply_nifti_header(image, path);
    return image;
  });
}

Image read_image(const fs::path& path, const ReadOptions& options) {
  const OpenedImage opened = open_checked(path, options);
  if (auto image = read_nifti_in_one_pass(opened, path)) return std::move(*image);
  if (const auto reason = image_detail::incomplete_data_reason(path))
    throw read_error(path, *reason);

  return reading_with_itk(path, [&] {
    const itk::ImageIOBase::Pointer& io = opened.io;
    const Volume::Pointer volume_image = io->GetNumberOfDimensions() == 3
                                             ? read_volume(io, path)
                                             : read_one_volume_of_series(io, path, opened.volume);
    Image image = to_image(*volume_image, path);
    image.file_type = file_type_of(*io);
    if (dynamic_cast<itk::NiftiImageIO*>(io.GetPointer())) image_detail::apply_nifti_header(image, path);
    return image;
  });
}

namespace {

// ITK's NIfTI writer reports a failed open or a short write only on stderr.
void require_complete(const fs::path& tmp, const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(tmp, ec))
    throw UserError("cannot write '" + path.string() + "': the image writer could not create " +
                    tmp.filename().string() + " in that folder");
  if (const auto reason = image_detail::incomplete_data_reason(tmp))
    throw UserError("cannot write '" + path.string() + "': the written file is incomplete (" +
                    *reason + "); is the disk full?");
}

// The grid as ITK stores it, and the voxel count checked (every writer below).
image_detail::ItkGrid checked_grid(const Image& image, const fs::path& path) {
  const std::string cannot_write = "cannot write '" + path.string() + "'";
  if (image.data.size() != image.voxel_count())
    throw UserError(cannot_write + ": the image holds " + std::to_string(image.data.size()) + " values for " +
                    std::to_string(image.voxel_count()) + " voxels");
  return image_detail::itk_grid(image.dims, image.voxel_to_world, cannot_write);
}

// Formats other than NIfTI through ITK's writer for them.
template <class T>
void write_as(const Image& image, const fs::path& path, const std::vector<std::string>& companions) {
  using Out = itk::Image<T, 3>;
  const typename Out::Pointer volume = to_itk<T>(image, checked_grid(image, path));
  write_atomically(path, companions, [&](const fs::path& tmp) {
    itk::ImageIOBase::Pointer io = create_image_io(tmp, itk::IOFileModeEnum::WriteMode);
    if (!io) throw UserError("cannot write '" + path.string() + "': no ITK writer for it");
    auto writer = itk::ImageFileWriter<Out>::New();
    writer->SetImageIO(io);
    writer->SetFileName(tmp.string());
    writer->SetInput(volume);
    try {
      writer->Update();
    } catch (const itk::ExceptionObject& e) {
      throw UserError("cannot write '" + path.string() + "': " + reason_of(e));
    }
    require_complete(tmp, path);
  });
}

// A NIfTI file without a header of the image's own: the bytes ITK's writer writes, from memory.
void write_itk_form(const Image& image, const fs::path& path, VoxelType type) {
  const image_detail::ItkGrid grid = checked_grid(image, path);
  write_atomically(path, {}, [&](const fs::path& tmp) {
    image_detail::write_itk_form_nifti(grid, type, image.data, tmp, path);
  });
}

// A NIfTI file with the image's header carried over (niftilib's header; ITK cannot). Its
// writer checks every write itself.
void write_nifti(const Image& image, const fs::path& path, VoxelType type) {
  write_atomically(path, {}, [&](const fs::path& tmp) { image_detail::write_nifti(image, tmp, path, type); });
}

}  // namespace

void prepare_image_io() { register_formats(); }

void write_image(const Image& image, const fs::path& path, VoxelType type) {
  register_formats();
  const std::vector<std::string> companions = companions_for_writing(path);
  const std::string extension = image_detail::lowercase(full_extension(path));
  if (extension == ".nii.gz" || extension == ".nii")
    return image.nifti ? write_nifti(image, path, type) : write_itk_form(image, path, type);
  switch (type) {
    case VoxelType::uint8: return write_as<uint8_t>(image, path, companions);
    case VoxelType::int8: return write_as<int8_t>(image, path, companions);
    case VoxelType::uint16: return write_as<uint16_t>(image, path, companions);
    case VoxelType::int16: return write_as<int16_t>(image, path, companions);
    case VoxelType::uint32: return write_as<uint32_t>(image, path, companions);
    case VoxelType::int32: return write_as<int32_t>(image, path, companions);
    case VoxelType::float32: return write_as<float>(image, path, companions);
    case VoxelType::float64: return write_as<double>(image, path, companions);
  }
  throw UserError("cannot write '" + path.string() + "': unknown voxel type");
}

// A 4D file is read once (read_image per volume would decompress a .nii.gz again for each).
ImageVolumes read_image_volumes(const fs::path& path) {
  ReadOptions first;
  first.volume_index = 0;
  const itk::ImageIOBase::Pointer io = open_checked(path, first).io;  // read_image's checks and messages
  const std::vector<size_t> sizes = significant_sizes(*io);
  if (sizes.size() != 4 || sizes[3] < 2) return {{read_image(path)}, 0.0};
  require_sane_grid(*io, path, 4);
  if (const auto reason = image_detail::incomplete_data_reason(path))
    throw read_error(path, *reason);
  return reading_with_itk(path, [&] {
    const auto reader = series_reader(io, path);
    reader->Update();
    Series* series = reader->GetOutput();
    ImageVolumes out;
    out.volume_step = series->GetSpacing()[3];
    for (unsigned v = 0; v < sizes[3]; ++v) {
      Image image = to_image(*extract_volume(series, v), path);
      image.file_type = file_type_of(*io);
      if (v == 0 && dynamic_cast<itk::NiftiImageIO*>(io.GetPointer()))
        image_detail::apply_nifti_header(image, path);
      if (v > 0) {
        image.voxel_to_world = out.volumes.front().voxel_to_world;
        image.nifti = out.volumes.front().nifti;
      }
      out.volumes.push_back(std::move(image));
    }
    return out;
  });
}

void write_image_volumes(const ImageVolumes& series, const fs::path& path, VoxelType type) {
  if (series.volumes.empty())
    throw UserError("cannot write '" + path.string() + "': there is no volume to write");
  if (series.volumes.size() == 1) return write_image(series.volumes.front(), path, type);
  register_formats();
  const std::string extension = image_detail::lowercase(full_extension(path));
  if (extension != ".nii.gz" && extension != ".nii")
    throw UserError("cannot write '" + path.string() + "': a series of " +
                    std::to_string(series.volumes.size()) +
                    " volumes is written as 4D NIfTI; name the output .nii.gz or .nii");
  const Image& grid = series.volumes.front();
  std::vector<const std::vector<float>*> volumes;
  for (const Image& volume : series.volumes) {
    if (volume.dims != grid.dims)
      throw UserError("cannot write '" + path.string() + "': its volumes differ in size");
    volumes.push_back(&volume.data);
  }
  write_atomically(path, {}, [&](const fs::path& tmp) {
    image_detail::write_nifti(grid, volumes, series.volume_step, tmp, path, type);
  });
}

}  // namespace regpipe
