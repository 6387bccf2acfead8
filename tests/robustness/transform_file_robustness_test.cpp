// Malformed and hostile transform files of every format regpipe reads (FSL's .mat, ITK's
// .tfm/.txt, ANTs' MATLAB .mat, the world matrix): each refused with a UserError naming the
// file and what is wrong, never a crash, a hang on a huge file, or a matrix of NaN.
#include <regpipe/host/error.hpp>
#include <regpipe/host/transform_file.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

namespace fs = std::filesystem;
using regpipe::test::message_of;
using regpipe::test::TempDir;

namespace {

regpipe::Image grid(double voxel_mm) {
  regpipe::Image image;
  image.dims = {5, 6, 7};
  image.voxel_to_world.topLeftCorner<3, 3>() *= voxel_mm;
  return image;  // FSL's convention needs only the grid
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Reads `path` as regpipe detects its format and expects a refusal naming it with `problem`.
void expect_refused(const fs::path& path, const std::string& problem) {
  const regpipe::Image moving = grid(2.0), reference = grid(1.5);
  const std::string message = message_of([&] {
    regpipe::read_transform(path, regpipe::detect_transform_format(path), {&moving, &reference});
  });
  EXPECT_NE(message.find("'" + path.string() + "'"), std::string::npos) << message;
  EXPECT_NE(message.find(problem), std::string::npos) << "expected: " << problem << "\ngot: " << message;
}

struct FileCase {
  const char* name;
  const char* file_name;
  std::string contents;
  const char* problem;
};

void print_to(const FileCase& c, std::ostream* os) { *os << c.name; }

const std::string kIdentityRows = "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n";

// ITK's text file of one transform with `parameters` (an affine's 12 by default).
std::string itk_text(const std::string& parameters = "1 0 0 0 1 0 0 0 1 0 0 0",
                     const std::string& type = "AffineTransform_double_3_3") {
  return "#Insight Transform File V1.0\n#Transform 0\nTransform: " + type + "\nParameters: " +
         parameters + "\nFixedParameters: 0 0 0\n";
}

class MalformedTransformFile : public testing::TestWithParam<FileCase> {};

TEST_P(MalformedTransformFile, IsRefusedNamingTheFileAndTheProblem) {
  TempDir dir;
  write_text(dir / GetParam().file_name, GetParam().contents);
  expect_refused(dir / GetParam().file_name, GetParam().problem);
}

INSTANTIATE_TEST_SUITE_P(
    Text, MalformedTransformFile,
    testing::Values(
        FileCase{"FslEmpty", "flirt.mat", "", "found 0 lines of numbers"},
        FileCase{"FslThreeRows", "flirt.mat", "1 0 0 0\n0 1 0 0\n0 0 0 1\n", "found 3 lines of numbers"},
        FileCase{"FslFiveColumns", "flirt.mat", "1 0 0 0\n0 1 0 0 7\n0 0 1 0\n0 0 0 1\n", "line 2 has 5 numbers"},
        FileCase{"FslNaN", "flirt.mat", "1 0 0 0\n0 nan 0 0\n0 0 1 0\n0 0 0 1\n", "line 2: 'nan' is not a finite number"},
        FileCase{"FslInfinite", "flirt.mat", "1 0 0 inf\n0 1 0 0\n0 0 1 0\n0 0 0 1\n", "line 1: 'inf' is not a finite number"},
        FileCase{"FslOutOfRange", "flirt.mat", "1e999 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n", "'1e999' is not a finite number"},
        FileCase{"FslWord", "flirt.mat", "1 0 0 0\n0 1 0 0\n0 0 one 0\n0 0 0 1\n", "line 3: 'one' is not a finite number"},
        FileCase{"FslNotAffine", "flirt.mat", "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0.5 0 1\n", "an affine matrix has 0 0 0 1"},
        FileCase{"FslSingular", "flirt.mat", "0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 1\n", "is singular"},
        FileCase{"MatBinaryGarbage", "flirt.mat", std::string("1 0 0 0\n\x01\x02", 10),
                 "not a readable MATLAB v4 file: it ends 10 bytes into the header of matrix 1"},
        FileCase{"WorldBinary", "world.txt", std::string("1 0 0 0\n\x01\x02", 10), "it is a binary file"},
        FileCase{"WorldEmptyLinesOnly", "world.txt", "\n\n  \n", "found 0 lines of numbers"},
        FileCase{"WorldNaN", "world.txt", "1 0 0 0\n0 1 0 0\n0 0 1 0\nnan 0 0 1\n", "line 4: 'nan' is not a finite number"},
        FileCase{"WorldSingular", "world.txt", "1 0 0 0\n1 0 0 0\n0 0 1 0\n0 0 0 1\n", "is singular"},
        FileCase{"ItkHeaderOnly", "itk.tfm", "#Insight Transform File V1.0\n", "TxtTransformIOTemplate failed to read file"},
        FileCase{"ItkNotItkText", "itk.tfm", kIdentityRows, "not ITK's text"},
        // ITK's text reader stops at a number it cannot parse: the count falls short.
        FileCase{"ItkNaN", "itk.tfm", itk_text("1 0 0 0 nan 0 0 0 1 0 0 0"), "parameters array size (4) is less than expected"},
        FileCase{"ItkInfiniteOffset", "itk.txt", itk_text("1 0 0 0 1 0 0 0 1 0 inf 0"),
                 "parameters array size (10) is less than expected"},
        FileCase{"ItkTooFewParameters", "itk.tfm", itk_text("1 0 0"), "cannot read transform"},
        FileCase{"ItkUnknownType", "itk.tfm", itk_text("1", "FooTransform_double_3_3"), "FooTransform_double_3_3"},
        FileCase{"Itk2D", "itk.tfm", itk_text("1 0 0 1 0 0", "AffineTransform_double_2_2"),
                 "it holds AffineTransform_double_2_2"},
        FileCase{"ItkTwoTransforms", "itk.tfm", itk_text() + "#Transform 1\nTransform: AffineTransform_double_3_3\n"
                 "Parameters: 1 0 0 0 1 0 0 0 1 0 0 0\nFixedParameters: 0 0 0\n", "it holds 2 transforms"},
        // ITK 5.2 creates the named class and leaks it when it is not a transform (the
        // transform fuzzer's itkImageIOBase, an image IO the factory makes).
        FileCase{"ItkImageIOName", "itk.tfm", itk_text("1", "itkImageIOBase"),
                 "line 3 names 'itkImageIOBase', not a transform type as ITK writes one (Class_double_3_3)"},
        FileCase{"ItkNameAfterANul", "itk.tfm", itk_text("1", std::string("itkNiftiImageIO\0_double_3_3", 27)),
                 "line 3 names 'itkNiftiImageIO'"},
        FileCase{"ItkNameOnALineAfterACarriageReturn", "itk.txt",
                 itk_text() + "#Transform 1\r transform :itkImageIOBase\n", "line 6 names 'itkImageIOBase'"}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- ANTs' MATLAB v4 .mat ------------------------------------------------------------------

// One MATLAB v4 matrix record: type 0 (little-endian doubles), rows x cols, the name, `values`.
std::string matlab_record(int32_t rows, int32_t cols, const std::string& name, const std::vector<double>& values) {
  std::string record(20, '\0');
  const int32_t header[5] = {0, rows, cols, 0, int32_t(name.size() + 1)};
  std::memcpy(record.data(), header, sizeof(header));
  record += name + '\0';
  record.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  return record;
}

std::string ants_mat(const std::vector<double>& parameters, int32_t rows = 12) {
  return matlab_record(rows, 1, "AffineTransform_double_3_3", parameters) +
         matlab_record(3, 1, "fixed", {0, 0, 0});
}

TEST(TransformFileRobustness, AntsMatWithANonFiniteParameterIsRefused) {
  TempDir dir;
  write_text(dir / "0GenericAffine.mat", ants_mat({1, 0, 0, 0, 1, 0, 0, 0, NAN, 0, 0, 0}));
  expect_refused(dir / "0GenericAffine.mat", "not a finite number");
}

TEST(TransformFileRobustness, AntsMatPromisingMoreThanItHoldsIsRefused) {
  TempDir dir;
  write_text(dir / "0GenericAffine.mat", matlab_record(1 << 30, 1 << 30, "AffineTransform_double_3_3", {1, 0}));
  expect_refused(dir / "0GenericAffine.mat",
                 "matrix 1 promises a 27-byte name and 1073741824 x 1073741824 values, more than the 43 bytes left");
}

TEST(TransformFileRobustness, AntsMatCutShortIsRefused) {
  TempDir dir;
  const std::string whole = ants_mat({1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0});
  write_text(dir / "0GenericAffine.mat", whole.substr(0, 60));
  expect_refused(dir / "0GenericAffine.mat", "12 x 1 values, more than the 40 bytes left in the file");
}

// ITK creates the class a record names (see ItkImageIOName above).
TEST(TransformFileRobustness, AntsMatNamingAClassThatIsNoTransformIsRefused) {
  TempDir dir;
  write_text(dir / "0GenericAffine.mat", matlab_record(12, 1, "itkImageIOBase", {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}) +
                                             matlab_record(3, 1, "fixed", {0, 0, 0}));
  expect_refused(dir / "0GenericAffine.mat",
                 "matrix 1 is named 'itkImageIOBase', neither a transform type as ITK writes one "
                 "(Class_double_3_3) nor 'fixed'");
}

TEST(TransformFileRobustness, AntsMatWithNegativeSizesIsRefused) {
  TempDir dir;
  write_text(dir / "0GenericAffine.mat", matlab_record(-12, 1, "AffineTransform_double_3_3", {1, 0}));
  expect_refused(dir / "0GenericAffine.mat", "not a readable MATLAB v4 file: matrix 1 has -12 x 1 values");
}

// ---- Files far larger than any transform: refused by size, never read into memory ---------

void make_sparse(const fs::path& path, uintmax_t bytes, const std::string& start) {
  write_text(path, start);
  fs::resize_file(path, bytes);
}

TEST(TransformFileRobustness, AHugeFslMatrixFileIsRefusedBySize) {
  TempDir dir;
  std::string rows;
  while (rows.size() < 100000) rows += kIdentityRows;
  write_text(dir / "flirt.mat", rows);
  expect_refused(dir / "flirt.mat", "it is 100000 bytes, more than the 65536 bytes of any 4x4 matrix file");
}

TEST(TransformFileRobustness, AHugeWorldMatrixWithoutALineBreakIsRefusedBySize) {
  TempDir dir;
  write_text(dir / "world.txt", std::string(200000, '1'));
  expect_refused(dir / "world.txt", "it is 200000 bytes, more than the 65536 bytes");
}

TEST(TransformFileRobustness, AHugeItkFileIsRefusedBySize) {
  TempDir dir;
  make_sparse(dir / "huge.tfm", uintmax_t(1) << 32, itk_text());
  expect_refused(dir / "huge.tfm", "it is 4294967296 bytes, more than the 67108864 bytes");
}

TEST(TransformFileRobustness, AHugeAntsMatIsRefusedBySize) {
  TempDir dir;
  make_sparse(dir / "0GenericAffine.mat", uintmax_t(1) << 32, std::string(1, '\0'));
  expect_refused(dir / "0GenericAffine.mat", "more than the 67108864 bytes");
}

// Through the CLI: `regpipe transform` stops with status 2 and the reason, and writes nothing.
TEST(TransformFileRobustness, TheCliRefusesAHostileTransformWithStatus2AndNoOutput) {
  TempDir dir;
  write_text(dir / "0GenericAffine.mat", matlab_record(1 << 30, 1 << 30, "AffineTransform_double_3_3", {1, 0}));
  std::string output;
  const int status = regpipe::test::run_command("'" + regpipe::test::regpipe_cli().string() + "' transform '" +
                                                    (dir / "0GenericAffine.mat").string() + "' -o '" +
                                                    (dir / "out.tfm").string() + "'",
                                                &output);
  EXPECT_EQ(status, 2) << output;
  EXPECT_NE(output.find("'" + (dir / "0GenericAffine.mat").string() + "': not a readable MATLAB v4 file"),
            std::string::npos)
      << output;
  EXPECT_FALSE(fs::exists(dir / "out.tfm"));
}

}  // namespace
