// ITK transform files against ITK itself: what regpipe writes, ITK's own reader reads as the same
// affine; what ITK writes (every 3D matrix-offset class, float or double, with a centre),
// regpipe reads as the map ITK's TransformPoint computes; anything else is refused by name.
#include <regpipe/host/error.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

// ITK's bundled Eigen 3.3 and the system Eigen 3.4 cannot meet (see image_io.cpp).
#define ITK_USE_SYSTEM_EIGEN
#include <itkAffineTransform.h>
#include <itkBSplineTransform.h>
#include <itkCenteredAffineTransform.h>
#include <itkCompositeTransform.h>
#include <itkEuler3DTransform.h>
#include <itkScaleSkewVersor3DTransform.h>
#include <itkSimilarity3DTransform.h>
#include <itkTransformFileReader.h>
#include <itkTransformFileWriter.h>
#include <itkVersorRigid3DTransform.h>

#include <fstream>
#include <functional>

namespace fs = std::filesystem;
using regpipe::test::TempDir;

using regpipe::test::message_of;
using regpipe::test::max_difference;

namespace {

const std::vector<std::string> kExtensions{".tfm", ".txt", ".mat", ".h5"};

Eigen::Matrix4d sample_transform() {
  return regpipe::params_to_matrix({0.2, -0.1, 0.3, 5.5, -6.25, 7, 1.1, 0.9, 1.05, 0.02, -0.03, 0.01},
                                   {10, -20, 30});
}

template <typename Transform>
void write_with_itk(const fs::path& path, const std::vector<typename Transform::Pointer>& list) {
  using Scalar = typename Transform::ScalarType;
  regpipe::prepare_transform_io();  // ITK's transform file types, registered by regpipe
  auto writer = itk::TransformFileWriterTemplate<Scalar>::New();
  for (const auto& t : list) writer->AddTransform(t);
  writer->SetFileName(path.string());
  writer->Update();
}

// The affine map of an ITK transform as its own TransformPoint computes it: the images of the
// origin and the three unit points.
template <typename Transform>
Eigen::Matrix4d matrix_by_points(const Transform& t) {
  using Point = typename Transform::InputPointType;
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  const Point origin = t.TransformPoint(Point());
  for (unsigned c = 0; c < 3; ++c) {
    Point unit;
    unit.Fill(0);
    unit[c] = 1;
    const Point image = t.TransformPoint(unit);
    for (unsigned r = 0; r < 3; ++r) m(r, c) = double(image[r]) - double(origin[r]);
  }
  for (unsigned r = 0; r < 3; ++r) m(r, 3) = origin[r];
  return m;
}

}  // namespace

TEST(ItkTransformIo, ItksOwnReaderReadsWhatRegpipeWrites) {
  TempDir dir;
  const Eigen::Matrix4d t = sample_transform();
  for (const std::string& extension : kExtensions) {
    const fs::path path = dir / ("t" + extension);
    regpipe::write_itk_transform(path, t);
    auto reader = itk::TransformFileReaderTemplate<double>::New();
    reader->SetFileName(path.string());
    reader->Update();
    ASSERT_EQ(reader->GetTransformList()->size(), 1u) << extension;
    const auto& read = *reader->GetTransformList()->front();
    EXPECT_EQ(read.GetTransformTypeAsString(), "AffineTransform_double_3_3") << extension;
    const auto* affine = dynamic_cast<const itk::AffineTransform<double, 3>*>(&read);
    ASSERT_NE(affine, nullptr) << extension;
    EXPECT_LT(max_difference(matrix_by_points(*affine), t), 1e-9) << extension;
    EXPECT_EQ(regpipe::read_itk_transform(path), t) << extension;  // bit for bit, all four
  }
  // No temporary left beside the four files.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 4);
}

TEST(ItkTransformIo, ReadsEveryMatrixOffsetClassWithItsCentre) {
  TempDir dir;
  itk::Point<double, 3> centre;
  centre[0] = 12;
  centre[1] = -7;
  centre[2] = 30;
  itk::Vector<double, 3> translation;
  translation[0] = 3.5;
  translation[1] = -1.25;
  translation[2] = 8;
  itk::Versor<double> versor;
  itk::Vector<double, 3> axis;
  axis[0] = 1;
  axis[1] = -2;
  axis[2] = 0.5;
  versor.Set(axis, 0.4);

  auto euler = itk::Euler3DTransform<double>::New();
  euler->SetCenter(centre);
  euler->SetRotation(0.1, -0.2, 0.3);
  euler->SetTranslation(translation);
  auto rigid = itk::VersorRigid3DTransform<double>::New();
  rigid->SetCenter(centre);
  rigid->SetRotation(versor);
  rigid->SetTranslation(translation);
  auto similarity = itk::Similarity3DTransform<double>::New();
  similarity->SetCenter(centre);
  similarity->SetRotation(versor);
  similarity->SetScale(1.3);
  similarity->SetTranslation(translation);
  auto skew = itk::ScaleSkewVersor3DTransform<double>::New();
  skew->SetCenter(centre);
  skew->SetRotation(versor);
  skew->SetTranslation(translation);
  auto skew_parameters = skew->GetParameters();
  for (unsigned i = 6; i < 15; ++i) skew_parameters[i] = i < 9 ? 0.9 + 0.1 * (i - 6) : 0.01 * (i - 8);
  skew->SetParameters(skew_parameters);
  auto centred = itk::CenteredAffineTransform<double, 3>::New();
  centred->SetCenter(centre);
  centred->Rotate3D(axis, 0.3);
  centred->Scale(1.2);
  centred->SetTranslation(translation);

  const std::vector<std::pair<std::string, Eigen::Matrix4d>> cases = [&] {
    std::vector<std::pair<std::string, Eigen::Matrix4d>> all;
    for (const std::string& extension : kExtensions) {
      auto write = [&](const std::string& name, auto transform) {
        using T = typename decltype(transform)::ObjectType;
        const fs::path path = dir / (name + extension);
        write_with_itk<T>(path, {transform});
        all.emplace_back(path.string(), matrix_by_points(*transform));
      };
      write("euler", euler);
      write("versor_rigid", rigid);
      write("similarity", similarity);
      write("scale_skew_versor", skew);
      write("centered_affine", centred);
    }
    return all;
  }();
  for (const auto& [path, expected] : cases)
    EXPECT_LT(max_difference(regpipe::read_itk_transform(path), expected), 1e-9) << path;
}

TEST(ItkTransformIo, ReadsAHandWrittenTextFileWithACentre) {
  // ITK: x -> A (x - c) + c + t. A = 2 I, c = (1,1,1), t = (0,0,5): offset = c + t - A c.
  TempDir dir;
  std::ofstream(dir / "c.tfm") << "#Insight Transform File V1.0\n#Transform 0\n"
                                  "Transform: MatrixOffsetTransformBase_double_3_3\n"
                                  "Parameters: 2 0 0 0 2 0 0 0 2 0 0 5\n"
                                  "FixedParameters: 1 1 1\n";
  Eigen::Matrix4d expected = Eigen::Matrix4d::Identity();
  expected.topLeftCorner<3, 3>() *= 2;
  expected.topRightCorner<3, 1>() = Eigen::Vector3d(-1, -1, 4);
  EXPECT_EQ(regpipe::read_itk_transform(dir / "c.tfm"), expected);
}

TEST(ItkTransformIo, ReadsAFloatAffine) {
  TempDir dir;
  using Float = itk::AffineTransform<float, 3>;
  auto affine = Float::New();
  Float::MatrixType matrix;
  Float::OutputVectorType offset;
  const Eigen::Matrix4d t = sample_transform();
  for (unsigned r = 0; r < 3; ++r) {
    for (unsigned c = 0; c < 3; ++c) matrix(r, c) = float(t(r, c));
    offset[r] = float(t(r, 3));
  }
  affine->SetMatrix(matrix);
  affine->SetOffset(offset);
  for (const std::string& extension : {".tfm", ".mat"}) {
    const fs::path path = dir / (std::string("float") + extension);
    write_with_itk<Float>(path, {affine});
    // The binary file holds the floats, read as the same numbers; the text holds each one's
    // decimal digits, read as the nearest double: within a float's precision (6e-8 relative).
    const Eigen::Matrix4d expected = t.cast<float>().cast<double>();
    EXPECT_LT(max_difference(regpipe::read_itk_transform(path), expected), 1e-6) << extension;
    if (std::string(extension) == ".mat") EXPECT_EQ(regpipe::read_itk_transform(path), expected);
  }
}

TEST(ItkTransformIo, RefusesWhatIsNotOneAffineNamingIt) {
  TempDir dir;
  auto affine = itk::AffineTransform<double, 3>::New();
  auto euler = itk::Euler3DTransform<double>::New();
  write_with_itk<itk::AffineTransform<double, 3>>(dir / "two.tfm", {affine, affine});
  auto composite = itk::CompositeTransform<double, 3>::New();
  composite->AddTransform(affine);
  composite->AddTransform(euler);
  write_with_itk<itk::CompositeTransform<double, 3>>(dir / "composite.h5", {composite});
  auto bspline = itk::BSplineTransform<double, 3, 3>::New();
  write_with_itk<itk::BSplineTransform<double, 3, 3>>(dir / "bspline.tfm", {bspline});
  write_with_itk<itk::AffineTransform<double, 2>>(dir / "flat.tfm",
                                                   {itk::AffineTransform<double, 2>::New()});
  std::ofstream(dir / "words.tfm") << "not a transform\n";
  std::ofstream(dir / "count.tfm") << "#Insight Transform File V1.0\n#Transform 0\n"
                                      "Transform: AffineTransform_double_3_3\nParameters: 1 0 0\n"
                                      "FixedParameters: 0 0 0\n";
  std::ofstream(dir / "t.xfm") << "#Insight Transform File V1.0\n";

  const std::vector<std::pair<std::string, std::string>> cases{
      {"two.tfm", "holds 2 transforms (AffineTransform_double_3_3, AffineTransform_double_3_3)"},
      {"composite.h5", "holds CompositeTransform_double_3_3 of 2 (AffineTransform_double_3_3, Euler3DTransform_double_3_3)"},
      {"bspline.tfm", "holds BSplineTransform_double_3_3"},
      {"flat.tfm", "holds AffineTransform_double_2_2"},
      {"words.tfm", "not ITK's text (its first line is not '#Insight Transform File V1.0')"},
      {"count.tfm", "cannot read transform '"},
      {"absent.tfm", "no such file"},
      {"t.xfm", "ITK picks the file type from the extension"},
  };
  for (const auto& [name, expected] : cases) {
    const fs::path file = dir / name;  // clang 14 cannot capture a structured binding
    const std::string message = message_of([&] { regpipe::read_itk_transform(file); });
    EXPECT_NE(message.find("'" + (dir / name).string() + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST(ItkTransformIo, AFailedWriteLeavesNoFile) {
  TempDir dir;
  EXPECT_NE(message_of([&] { regpipe::write_itk_transform(dir / "t.xfm", sample_transform()); })
                .find("ITK picks the file type from the extension"),
            std::string::npos);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}
