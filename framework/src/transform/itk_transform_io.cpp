// ITK transform files through ITK's own transform IO: .tfm/.txt (ITK's text), .mat (MATLAB v4
// binary: ANTs' affine), .h5/.hdf5. The only file that includes ITK's transform headers.
//
// An ITK transform maps fixed (reference) LPS points to moving LPS points, the abi.h direction
// itself: every MatrixOffsetTransformBase (affine, Euler, versor, similarity, ...) is
// x -> M x + offset with M and offset already folding in its centre.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/input_file.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform_io.hpp>

#include "io/itk_message.hpp"
#include "transform/file_size_limit.hpp"
#include "transform/itk_transform_names.hpp"
#include "transform/matlab_v4_check.hpp"

// ITK's bundled Eigen 3.3 and the system Eigen 3.4 cannot meet (see image_io.cpp).
#define ITK_USE_SYSTEM_EIGEN
#include <itkAffineTransform.h>
#include <itkCompositeTransform.h>
#include <itkHDF5TransformIOFactory.h>
#include <itkMatlabTransformIOFactory.h>
#include <itkTransformFactory.h>
#include <itkTransformFactoryBase.h>
#include <itkTransformFileReader.h>
#include <itkTransformFileWriter.h>
#include <itkTxtTransformIOFactory.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <mutex>
#include <string>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

using Affine = itk::AffineTransform<double, 3>;
using MatrixOffset = itk::MatrixOffsetTransformBase<double, 3, 3>;
using Composite = itk::CompositeTransform<double, 3>;

constexpr std::array<const char*, 5> kItkExtensions{".tfm", ".txt", ".mat", ".h5", ".hdf5"};
constexpr const char* kItkExtensionList = ".tfm or .txt (text), .mat (MATLAB), .h5 or .hdf5";

UserError read_error(const fs::path& path, const std::string& reason) {
  return UserError("cannot read transform '" + path.string() + "': " + reason);
}

std::string reason_of(const itk::ExceptionObject& e, const std::string& fallback) {
  std::string reason = readable_itk_description(e.GetDescription());
  // A class the factory lacks comes with the list of all ~130 it has: keep the name only.
  const size_t list = reason.find(" The usual cause of this error is not registering");
  if (list != std::string::npos) reason.resize(list);
  if (reason.find("Could not create Transform IO object") != std::string::npos)
    return "ITK has no reader for its contents (.h5/.hdf5 must be HDF5, .mat MATLAB v4)";
  return reason.empty() ? fallback : reason;
}

// "AffineTransform_double_3_3, Euler3DTransform_double_3_3"
template <typename Transforms>
std::string names_of(const Transforms& transforms) {
  std::string names;
  for (const auto& transform : transforms)
    names += (names.empty() ? "" : ", ") + transform->GetTransformTypeAsString();
  return names;
}

// What a file that is not one 3D affine holds, for the refusal: "BSplineTransform_double_3_3",
// "2 transforms (AffineTransform_double_3_3, DisplacementFieldTransform_double_3_3)",
// "CompositeTransform_double_3_3 of 2 (AffineTransform_double_3_3, ...)".
std::string contents_of(const itk::TransformFileReaderTemplate<double>::TransformListType& list) {
  if (list.size() != 1) return std::to_string(list.size()) + " transforms (" + names_of(list) + ")";
  const std::string name = list.front()->GetTransformTypeAsString();
  const auto* composite = dynamic_cast<const Composite*>(list.front().GetPointer());
  if (!composite) return name;
  return name + " of " + std::to_string(composite->GetNumberOfTransforms()) + " (" +
         names_of(composite->GetTransformQueue()) + ")";
}

void require_itk_extension(const fs::path& path, const char* verb) {
  if (!has_itk_transform_extension(path))
    throw UserError("cannot " + std::string(verb) + " '" + path.string() +
                    "' as an ITK transform: ITK picks the file type from the extension, " +
                    kItkExtensionList);
}

}  // namespace

bool has_itk_transform_extension(const fs::path& path) {
  const std::string extension = path.extension().string();
  return std::find(kItkExtensions.begin(), kItkExtensions.end(), extension) != kItkExtensions.end();
}

bool is_itk_text_transform(const fs::path& path) {
  // Only the start is read: the file may be anything, of any size.
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(in.gcount()));
  const size_t first = head.find_first_not_of(" \t\r\n\f\v");
  return first != std::string::npos && head.compare(first, 23, "#Insight Transform File") == 0;
}

void prepare_transform_io() {
  static std::once_flag once;
  std::call_once(once, [] {
    prepare_image_io();  // ITK's process-wide globals, made before the transform factories
    itk::TxtTransformIOFactory::RegisterOneFactory();
    itk::MatlabTransformIOFactory::RegisterOneFactory();
    itk::HDF5TransformIOFactory::RegisterOneFactory();
    // The transform classes a file may name (float and double); a reader would register
    // them on its first construction, unguarded. ITK 3 wrote the base class's name, which
    // ITK 5 no longer registers.
    itk::TransformFactoryBase::RegisterDefaultTransforms();
    itk::TransformFactory<itk::MatrixOffsetTransformBase<double, 3, 3>>::RegisterTransform();
    itk::TransformFactory<itk::MatrixOffsetTransformBase<float, 3, 3>>::RegisterTransform();
  });
}

void write_itk_transform(const fs::path& path, const Eigen::Matrix4d& ref_to_mov) {
  prepare_transform_io();
  require_itk_extension(path, "write");
  auto affine = Affine::New();
  Affine::MatrixType matrix;
  Affine::OutputVectorType offset;
  for (unsigned r = 0; r < 3; ++r) {
    for (unsigned c = 0; c < 3; ++c) matrix(r, c) = ref_to_mov(r, c);
    offset[r] = ref_to_mov(r, 3);
  }
  affine->SetMatrix(matrix);
  affine->SetOffset(offset);
  write_atomically(path, [&](const fs::path& tmp) {
    auto writer = itk::TransformFileWriterTemplate<double>::New();
    writer->SetInput(affine);
    writer->SetFileName(tmp.string());
    try {
      writer->Update();
    } catch (const itk::ExceptionObject& e) {
      throw UserError("cannot write '" + path.string() + "': " + reason_of(e, "ITK could not write it"));
    }
  });
}

Eigen::Matrix4d read_itk_transform(const fs::path& path) {
  prepare_transform_io();
  if (const auto problem = input_file_problem(path)) throw read_error(path, *problem);
  require_itk_extension(path, "read");
  transform_detail::require_size_at_most(path, transform_detail::kItkFileMaxBytes, "ITK transform file of one affine");
  const std::string extension = path.extension().string();
  if (extension == ".tfm" || extension == ".txt") {
    if (!is_itk_text_transform(path))
      throw read_error(path, "not ITK's text (its first line is not '#Insight Transform File V1.0')");
    if (const auto problem = transform_detail::itk_text_transform_names_problem(path))
      throw read_error(path, *problem);
  }
  if (extension == ".mat")
    if (const auto problem = transform_detail::matlab_v4_problem(path))
      throw read_error(path, "not a readable MATLAB v4 file: " + *problem);
  auto reader = itk::TransformFileReaderTemplate<double>::New();
  reader->SetFileName(path.string());
  try {
    reader->Update();  // a float file is read as its double twin
  } catch (const itk::ExceptionObject& e) {
    throw read_error(path, reason_of(e, "ITK could not read it"));
  } catch (const std::exception& e) {
    // ITK 5.2's text reader lets the standard library's exceptions out on some malformed lines
    // (std::out_of_range for a "Transform:" name without its type suffix).
    throw read_error(path, std::string("it is not a well-formed ITK transform file (ITK's reader stopped: ") +
                               e.what() + ")");
  }
  const auto& list = *reader->GetTransformList();
  const std::string supported =
      "one 3D affine transform (AffineTransform, Euler3DTransform, VersorRigid3DTransform, "
      "Similarity3DTransform, ...) is supported";
  if (list.empty()) throw read_error(path, "it holds no transform; " + supported);
  const auto* transform = list.size() == 1 ? dynamic_cast<const MatrixOffset*>(list.front().GetPointer()) : nullptr;
  if (!transform) throw read_error(path, "it holds " + contents_of(list) + "; " + supported);

  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  const auto& matrix = transform->GetMatrix();
  const auto& offset = transform->GetOffset();
  for (unsigned r = 0; r < 3; ++r) {
    for (unsigned c = 0; c < 3; ++c) m(r, c) = matrix(r, c);
    m(r, 3) = offset[r];
  }
  if (!m.allFinite()) throw read_error(path, "its matrix holds a value that is not a finite number");
  return m;
}

}  // namespace regpipe
