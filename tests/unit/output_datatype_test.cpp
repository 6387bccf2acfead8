// The registered image's voxel type (outputs.datatype): read_image keeps the file's type,
// write_image stores any type (integers rounded to nearest and clamped), and the pipeline
// writes the moving image's type by default. Written files are read back with ITK's own
// ImageIO, independently of regpipe's reader.
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/pipeline.hpp>

#include "support/test_support.hpp"

// ITK's bundled Eigen 3.3 and the system Eigen 3.4 cannot meet (see image_io.cpp).
#define ITK_USE_SYSTEM_EIGEN
#include <itkImageFileReader.h>
#include <itkMetaImageIO.h>
#include <itkNiftiImageIO.h>
#include <itkNrrdImageIO.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <fstream>
#include <limits>
#include <vector>

namespace fs = std::filesystem;
using namespace regpipe;
using regpipe::test::TempDir;

namespace {

// The component type a file stores, as ITK's own reader for its format reports it.
itk::IOComponentEnum stored_component_type(const fs::path& path) {
  itk::ImageIOBase::Pointer io;
  const std::string name = path.filename().string();
  if (name.ends_with(".mha"))
    io = itk::MetaImageIO::New();
  else if (name.ends_with(".nrrd"))
    io = itk::NrrdImageIO::New();
  else
    io = itk::NiftiImageIO::New();
  io->SetFileName(path.string());
  io->ReadImageInformation();
  return io->GetComponentType();
}

// The stored values, read through ITK in their own type (no conversion on the way).
template <class T>
std::vector<T> stored_values(const fs::path& path) {
  auto reader = itk::ImageFileReader<itk::Image<T, 3>>::New();
  reader->SetImageIO(itk::NiftiImageIO::New());
  reader->SetFileName(path.string());
  reader->Update();
  const auto* image = reader->GetOutput();
  const T* begin = image->GetBufferPointer();
  return std::vector<T>(begin, begin + image->GetLargestPossibleRegion().GetNumberOfPixels());
}

// 2 x 2 x n voxels (NIfTI writers drop trailing axes of size 1).
Image small_image(const std::vector<float>& values) {
  Image image;
  image.dims = {2, 2, uint32_t(values.size() / 4)};
  image.voxel_to_world.diagonal() << 1.5, 2.0, 2.5, 1.0;
  image.data = values;
  return image;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST(OutputDatatype, IntegerTypesRoundToNearestAndClampToTheirRange) {
  TempDir dir;
  // What interpolation hands the writer: fractions, B-spline overshoot on both sides, a NaN.
  const Image image = small_image({-3.2f, -0.5f, 0.49f, 0.5f, 1.5f, 127.6f, 254.5f, 255.4f,
                                  300.0f, -40000.0f, 40000.0f, kNaN});

  write_image(image, dir / "u8.nii.gz", VoxelType::uint8);
  EXPECT_EQ(stored_component_type(dir / "u8.nii.gz"), itk::IOComponentEnum::UCHAR);
  EXPECT_EQ(stored_values<uint8_t>(dir / "u8.nii.gz"),
            (std::vector<uint8_t>{0, 0, 0, 1, 2, 128, 255, 255, 255, 0, 255, 0}));

  write_image(image, dir / "i16.nii.gz", VoxelType::int16);
  EXPECT_EQ(stored_component_type(dir / "i16.nii.gz"), itk::IOComponentEnum::SHORT);
  EXPECT_EQ(stored_values<int16_t>(dir / "i16.nii.gz"),
            (std::vector<int16_t>{-3, -1, 0, 1, 2, 128, 255, 255, 300, -32768, 32767, 0}));

  write_image(image, dir / "f32.nii.gz", VoxelType::float32);
  EXPECT_EQ(stored_component_type(dir / "f32.nii.gz"), itk::IOComponentEnum::FLOAT);
  const std::vector<float> f32 = stored_values<float>(dir / "f32.nii.gz");
  ASSERT_EQ(f32.size(), image.data.size());
  for (size_t i = 0; i + 1 < f32.size(); ++i) EXPECT_EQ(f32[i], image.data[i]) << i;
  // (the NaN is stored as NaN; ITK's NIfTI reader hands it back as 0, so it is not compared)

  // The default stays float32: callers that did not ask keep what they had.
  write_image(image, dir / "default.nii");
  EXPECT_EQ(stored_component_type(dir / "default.nii"), itk::IOComponentEnum::FLOAT);
}

TEST(OutputDatatype, EveryTypeRoundTripsInEveryFormat) {
  TempDir dir;
  const Image image = small_image({0.0f, 1.0f, 2.0f, 100.0f, 127.0f, 3.0f, 4.0f, 5.0f});
  const std::pair<VoxelType, itk::IOComponentEnum> types[] = {
      {VoxelType::uint8, itk::IOComponentEnum::UCHAR},   {VoxelType::int8, itk::IOComponentEnum::CHAR},
      {VoxelType::uint16, itk::IOComponentEnum::USHORT}, {VoxelType::int16, itk::IOComponentEnum::SHORT},
      {VoxelType::uint32, itk::IOComponentEnum::UINT},   {VoxelType::int32, itk::IOComponentEnum::INT},
      {VoxelType::float32, itk::IOComponentEnum::FLOAT}, {VoxelType::float64, itk::IOComponentEnum::DOUBLE}};
  for (const auto& [type, component] : types) {
    for (const char* extension : {".nii.gz", ".nrrd", ".mha"}) {
      const fs::path path = dir / (std::string(voxel_type_name(type)) + extension);
      SCOPED_TRACE(path.filename().string());
      write_image(image, path, type);
      EXPECT_EQ(stored_component_type(path), component);
      const Image back = read_image(path);
      EXPECT_EQ(back.file_type, type);
      EXPECT_EQ(back.data, image.data);
    }
  }
}

TEST(OutputDatatype, NamesRoundTrip) {
  for (const std::string& name : voxel_type_names()) {
    const auto type = voxel_type_from_name(name);
    ASSERT_TRUE(type) << name;
    EXPECT_EQ(voxel_type_name(*type), name);
  }
  EXPECT_FALSE(voxel_type_from_name("moving"));
  EXPECT_FALSE(voxel_type_from_name("float"));
}

TEST(OutputDatatype, AFailedTypedWriteLeavesNothing) {
  TempDir dir;
  const Image image = small_image({1.0f, 2.0f, 3.0f, 4.0f});
  const std::string missing =
      regpipe::test::message_of([&] { write_image(image, dir / "nowhere" / "a.nii.gz", VoxelType::uint8); });
  EXPECT_NE(missing.find("does not exist"), std::string::npos) << missing;
  const std::string proc = regpipe::test::message_of([&] { write_image(image, "/proc/x.nii", VoxelType::int16); });
  EXPECT_EQ(proc.rfind("cannot write '/proc/x.nii': ", 0), 0u) << proc;
  EXPECT_FALSE(fs::exists("/proc/x.nii"));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

// The pipeline end to end on phantoms: a uint8 (and an int16) moving image gives a registered
// image of the same type, each voxel the float32 run's value rounded and clamped.
class PipelineDatatype : public ::testing::Test {
 protected:
  PipelineDatatype() : host_(test::built_plugins()) {
    write_image(make_head_phantom({40, 40, 40}, 4.0, 0), dir_ / "reference.nii.gz");
    Image moving = make_head_phantom({36, 44, 40}, 4.0, 1);  // values 0..1000
    moving.voxel_to_world(0, 3) += 3.0;                      // something to recover
    Image moving_u8 = moving;
    for (float& v : moving_u8.data) v *= 0.25f;  // 0..250: B-spline overshoot passes 255
    write_image(moving_u8, dir_ / "moving_u8.nii.gz", VoxelType::uint8);
    write_image(moving, dir_ / "moving_i16.nii.gz", VoxelType::int16);
    std::ofstream(dir_ / "pipeline.yaml") << "inputs:\n"
                                             "  reference: reference.nii.gz\n"
                                             "  moving: moving_u8.nii.gz\n"
                                             "registration:\n"
                                             "  dof: 6\n"
                                             "  levels_mm: [8]\n"
                                             "  cost: {plugin: cpu.cr, params: {bins: 32}}\n"
                                             "  optimizer: {plugin: optim.powell}\n"
                                             "  resampler: {plugin: resample.cpu}\n"
                                             "outputs:\n"
                                             "  dir: out\n";
  }
  // Runs the pipeline with --set overrides into outputs.dir `out`; returns the registered image path.
  fs::path run(const std::string& out, std::vector<Override> sets) {
    sets.push_back({"outputs.dir", (dir_ / out).string()});
    const Pipeline p = load_pipeline(dir_ / "pipeline.yaml", sets, host_);
    HostServices services;
    run_pipeline(p, host_, services);
    return dir_ / out / "registered.nii.gz";
  }
  TempDir dir_;
  PluginHost host_;
};

TEST_F(PipelineDatatype, RegisteredImageKeepsTheMovingTypeRoundedAndClamped) {
  const fs::path as_moving = run("u8", {});
  const fs::path as_float = run("f32", {{"outputs.datatype", "float32"}});
  ASSERT_EQ(stored_component_type(as_moving), itk::IOComponentEnum::UCHAR);
  ASSERT_EQ(stored_component_type(as_float), itk::IOComponentEnum::FLOAT);
  const std::vector<uint8_t> u8 = stored_values<uint8_t>(as_moving);
  const std::vector<float> f32 = stored_values<float>(as_float);
  ASSERT_EQ(u8.size(), f32.size());
  size_t clamped = 0;
  for (size_t i = 0; i < u8.size(); ++i) {
    const float expected = std::clamp(std::round(f32[i]), 0.0f, 255.0f);
    ASSERT_EQ(float(u8[i]), expected) << "voxel " << i << ": float32 run gave " << f32[i];
    clamped += f32[i] < -0.5f || f32[i] >= 255.5f;
  }
  std::printf("%zu of %zu voxels clamped\n", clamped, u8.size());

  const auto report = nlohmann::json::parse(std::ifstream(dir_ / "u8" / "report.json"));
  for (const char* phase : {"reading", "registration", "writing"})
    EXPECT_GT(report["seconds"][phase].get<double>(), 0.0) << phase;
  EXPECT_GE(report["seconds"]["total"].get<double>(),
            report["seconds"]["reading"].get<double>() +
                report["seconds"]["registration"].get<double>() +
                report["seconds"]["writing"].get<double>());
}

TEST_F(PipelineDatatype, Int16MovingGivesInt16AndAnExplicitTypeWins) {
  const fs::path i16 = run("i16", {{"inputs.moving", (dir_ / "moving_i16.nii.gz").string()}});
  EXPECT_EQ(stored_component_type(i16), itk::IOComponentEnum::SHORT);
  const fs::path f64 = run("f64", {{"outputs.datatype", "float64"}});
  EXPECT_EQ(stored_component_type(f64), itk::IOComponentEnum::DOUBLE);
}

TEST_F(PipelineDatatype, UnknownDatatypeIsAValidationErrorWithASuggestion) {
  std::ofstream(dir_ / "bad.yaml") << "inputs:\n"
                                      "  reference: reference.nii.gz\n"
                                      "  moving: moving_u8.nii.gz\n"
                                      "outputs:\n"
                                      "  dir: out\n"
                                      "  datatype: int61\n";
  const std::string message =
      regpipe::test::message_of([&] { load_pipeline(dir_ / "bad.yaml", {}, host_); });
  EXPECT_NE(message.find("bad.yaml:6:13: "), std::string::npos) << message;
  EXPECT_NE(message.find("outputs.datatype=int61 is not one of moving, uint8, int8, uint16, "
                         "int16, uint32, int32, float32, float64"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("int16"), std::string::npos) << message;
  const std::string from_set = regpipe::test::message_of(
      [&] { load_pipeline(dir_ / "pipeline.yaml", {{"outputs.datatype", "float"}}, host_); });
  EXPECT_NE(from_set.find("outputs.datatype=float is not one of"), std::string::npos) << from_set;
}
