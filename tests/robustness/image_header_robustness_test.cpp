// Hostile image headers (issue 20, inputs): each file is built byte by byte here and must be
// refused by read_image and by the header check `regpipe validate` runs, before ITK allocates
// or inverts anything, with a UserError naming the file and the field at fault.
#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>

#include "support/raw_nifti.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <vector>

namespace fs = std::filesystem;
using regpipe::test::message_of;
using regpipe::test::RawNifti;
using regpipe::test::TempDir;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// A sound 4x4x4 float32 NIfTI-1 with both forms set: every case below spoils one field.
RawNifti sound_nifti() {
  RawNifti n;
  n.dim = {4, 4, 4};
  n.qform_code = n.sform_code = 1;
  n.srow[0][0] = n.srow[1][1] = n.srow[2][2] = 1.0f;
  n.payload.assign(4 * 4 * 4 * sizeof(float), 0);
  return n;
}

using Bytes = std::vector<char>;

template <class T>
void put(Bytes& header, size_t offset, T value) {
  std::memcpy(&header[offset], &value, sizeof(value));
}

// The file of `n` with its header bytes edited by `edit`.
Bytes nifti_bytes(const RawNifti& n, const std::function<void(Bytes&)>& edit) {
  Bytes bytes = n.header();
  edit(bytes);
  bytes.insert(bytes.end(), 4, '\0');  // no extensions
  bytes.insert(bytes.end(), n.payload.begin(), n.payload.end());
  return bytes;
}

void write_bytes(const fs::path& path, const Bytes& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

void write_gzip(const fs::path& path, const Bytes& bytes) {
  gzFile out = gzopen(path.c_str(), "wb");
  gzwrite(out, bytes.data(), unsigned(bytes.size()));
  gzclose(out);
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// Both entry points refuse `path` with a message naming it and holding `problem`.
void expect_refused(const fs::path& path, const std::string& problem) {
  regpipe::ReadOptions first;
  first.volume_index = 0;
  for (const std::string& message :
       {message_of([&] { regpipe::read_image(path, first); }),
        message_of([&] { regpipe::check_image_header(path, first); })}) {
    EXPECT_NE(message.find("'" + path.string() + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << "expected: " << problem << "\ngot: " << message;
  }
}

// ---- NIfTI-1 fields, one spoiled at a time ----------------------------------------------

struct HeaderCase {
  const char* name;
  std::function<void(Bytes&)> edit;
  const char* problem;
};

void print_to(const HeaderCase& c, std::ostream* os) { *os << c.name; }

const HeaderCase kHeaderCases[] = {
    {"SizeofHdrWrong", [](Bytes& h) { put<int32_t>(h, 0, 52316); }, "sizeof_hdr is 52316; a NIfTI-1 header has 348"},
    {"SizeofHdrAndMagicWrong", [](Bytes& h) { put<int32_t>(h, 0, -16776868); std::memcpy(&h[344], "n+2", 4); },
     "sizeof_hdr is -16776868; a NIfTI-1 header has 348"},
    {"WrongMagic", [](Bytes& h) { std::memcpy(&h[344], "n+2", 4); }, "wrong NIfTI magic 'n+2'"},
    {"NoMagic", [](Bytes& h) { std::memset(&h[344], 0, 4); }, "wrong NIfTI magic ''"},
    {"PairMagicInOneFile", [](Bytes& h) { std::memcpy(&h[344], "ni1", 4); }, "'ni1' marks a .hdr/.img pair"},
    {"BinaryMagic", [](Bytes& h) { std::memcpy(&h[344], "\x01\xff", 3); }, "wrong NIfTI magic '\\x01\\xff'"},
    {"RankZero", [](Bytes& h) { put<int16_t>(h, 40, 0); }, "dim[0] (the number of dimensions) is 0"},
    {"RankEight", [](Bytes& h) { put<int16_t>(h, 40, 8); }, "dim[0] (the number of dimensions) is 8"},
    {"RankNegative", [](Bytes& h) { put<int16_t>(h, 40, -3); }, "dim[0] (the number of dimensions) is -3"},
    {"SizeZero", [](Bytes& h) { put<int16_t>(h, 44, 0); }, "dim[2] (the size along axis 2) is 0"},
    {"SizeNegative", [](Bytes& h) { put<int16_t>(h, 46, -5); }, "dim[3] (the size along axis 3) is -5"},
    {"UnknownDatatype", [](Bytes& h) { put<int16_t>(h, 70, 17); }, "datatype 17 is not a NIfTI data type code"},
    {"BitpixShort", [](Bytes& h) { put<int16_t>(h, 72, 16); },
     "bitpix 16 contradicts datatype 16 (float32, 32 bits per voxel)"},
    {"BitpixZero", [](Bytes& h) { put<int16_t>(h, 72, 0); }, "bitpix 0 contradicts datatype 16"},
    {"BitpixOfAnotherType", [](Bytes& h) { put<int16_t>(h, 70, 4); },
     "bitpix 32 contradicts datatype 4 (int16, 16 bits per voxel)"},
    {"PixdimZero", [](Bytes& h) { put<float>(h, 80, 0.0f); }, "pixdim[1] (the voxel size along axis 1) is 0"},
    {"PixdimNaN", [](Bytes& h) { put<float>(h, 84, kNaN); }, "pixdim[2] (the voxel size along axis 2) is nan"},
    {"PixdimInfinite", [](Bytes& h) { put<float>(h, 88, kInf); }, "pixdim[3] (the voxel size along axis 3) is inf"},
    {"PixdimNegative", [](Bytes& h) { put<float>(h, 80, -2.0f); }, "pixdim[1] (the voxel size along axis 1) is -2"},
    {"VoxOffsetNegative", [](Bytes& h) { put<float>(h, 108, -1.0f); }, "vox_offset -1 is not a byte offset"},
    {"VoxOffsetNaN", [](Bytes& h) { put<float>(h, 108, kNaN); }, "vox_offset nan is not a byte offset"},
    {"VoxOffsetInfinite", [](Bytes& h) { put<float>(h, 108, kInf); }, "vox_offset inf is not a byte offset"},
    {"VoxOffsetInsideTheHeader", [](Bytes& h) { put<float>(h, 108, 0.0f); },
     "vox_offset 0 is not a byte offset of the voxels (at least 352, after the header)"},
    {"VoxOffsetBeyondTheFile", [](Bytes& h) { put<float>(h, 108, 1e6f); },
     "vox_offset 1000000 is beyond the end of the file (608 bytes)"},
    {"QuaternionNaN", [](Bytes& h) { put<float>(h, 256, kNaN); }, "its qform's quatern_b is nan"},
    {"QoffsetInfinite", [](Bytes& h) { put<float>(h, 276, -kInf); }, "its qform's qoffset_z is -inf"},
    {"QfacNaN", [](Bytes& h) { put<float>(h, 76, kNaN); }, "its qform's qfac (pixdim[0]) is nan"},
    {"SformNaN", [](Bytes& h) { put<float>(h, 280, kNaN); }, "its sform's srow_x[0] is nan"},
    {"SformInfinite", [](Bytes& h) { put<float>(h, 300, kInf); }, "its sform's srow_y[1] is inf"},
    {"SformOffsetInfinite", [](Bytes& h) { put<float>(h, 324, -kInf); }, "its sform's srow_z[3] is -inf"},
    // Finite but absurd: ITK's SVD of such a matrix spun for minutes (the image fuzzer).
    {"SformOf1e20Millimetres", [](Bytes& h) { put<float>(h, 320, 9.6e20f); }, "its sform's srow_z[2] is 9.60000033e+20"},
    {"QoffsetOfAThousandKilometres", [](Bytes& h) { put<float>(h, 268, 1e9f); }, "its qform's qoffset_x is 1e+09"},
    {"PixdimOfAKilometre", [](Bytes& h) { put<float>(h, 84, 2e6f); }, "pixdim[2] (the voxel size along axis 2) is 2000000; voxel sizes are finite, positive and below 1e6 mm"},
};

class HostileNiftiHeader : public testing::TestWithParam<HeaderCase> {};

TEST_P(HostileNiftiHeader, IsRefusedNamingTheFileAndTheField) {
  TempDir dir;
  const Bytes bytes = nifti_bytes(sound_nifti(), GetParam().edit);
  write_bytes(dir / "hostile.nii", bytes);
  expect_refused(dir / "hostile.nii", GetParam().problem);
}

INSTANTIATE_TEST_SUITE_P(Fields, HostileNiftiHeader, testing::ValuesIn(kHeaderCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The gzipped twins, except where only an uncompressed size tells the fault (a .nii.gz whose
// vox_offset passes its end is reported as truncated data).
class HostileGzippedNiftiHeader : public testing::TestWithParam<HeaderCase> {};

TEST_P(HostileGzippedNiftiHeader, IsRefusedNamingTheFileAndTheField) {
  TempDir dir;
  write_gzip(dir / "hostile.nii.gz", nifti_bytes(sound_nifti(), GetParam().edit));
  expect_refused(dir / "hostile.nii.gz", GetParam().problem);
}

std::vector<HeaderCase> gzipped_cases() {
  std::vector<HeaderCase> cases;
  for (const HeaderCase& c : kHeaderCases)
    if (std::string(c.name) != "VoxOffsetBeyondTheFile") cases.push_back(c);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Fields, HostileGzippedNiftiHeader, testing::ValuesIn(gzipped_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// A form whose code is 0 is not used: garbage in it is no reason to refuse the file.
TEST(ImageHeaderRobustness, ANonFiniteFormWithCodeZeroIsIgnored) {
  TempDir dir;
  RawNifti n = sound_nifti();
  n.sform_code = 0;
  n.srow[0][0] = kNaN;
  n.write(dir / "unused_sform.nii");
  EXPECT_EQ(regpipe::read_image(dir / "unused_sform.nii").dims, (std::array<uint32_t, 3>{4, 4, 4}));
}

// A series without a repetition time (pixdim[4] = 0) is common and sound.
TEST(ImageHeaderRobustness, ASeriesWithoutATimeStepIsRead) {
  TempDir dir;
  RawNifti n = sound_nifti();
  n.dim = {4, 4, 4, 2};
  n.payload.assign(4 * 4 * 4 * 2 * sizeof(float), 0);
  n.write(dir / "series.nii");
  EXPECT_EQ(regpipe::read_image_volumes(dir / "series.nii").volumes.size(), 2u);
}

// ---- Analyze 7.5 and NIfTI pairs ---------------------------------------------------------

TEST(ImageHeaderRobustness, AnAnalyzeVoxelSizeOfZeroIsRefused) {
  TempDir dir;
  RawNifti n = sound_nifti();
  n.magic = "";
  n.qform_code = n.sform_code = 0;
  n.pixdim[1] = 0.0f;
  n.write_analyze(dir / "flat.hdr");
  expect_refused(dir / "flat.hdr", "pixdim[2] (the voxel size along axis 2) is 0; voxel sizes are finite, not 0 and below 1e6 mm");
  expect_refused(dir / "flat.img", "pixdim[2] (the voxel size along axis 2) is 0");
}

// A NIfTI pair (magic "ni1", voxels from the start of the .img) with its header edited.
void write_pair(const fs::path& hdr, const RawNifti& n, const std::function<void(Bytes&)>& edit) {
  RawNifti pair = n;
  pair.magic = "ni1";
  Bytes header = pair.header();
  put<float>(header, 108, 0.0f);
  edit(header);
  write_bytes(hdr, header);
  fs::path img = hdr;
  write_bytes(img.replace_extension(".img"), n.payload);
}

TEST(ImageHeaderRobustness, APairWithANonFiniteSformIsRefused) {
  TempDir dir;
  write_pair(dir / "pair.hdr", sound_nifti(), [](Bytes& h) { put<float>(h, 312, kNaN); });
  expect_refused(dir / "pair.hdr", "its sform's srow_z[0] is nan");
}

TEST(ImageHeaderRobustness, APairWithAnotherNiftiMagicIsRefused) {
  TempDir dir;
  write_pair(dir / "pair.hdr", sound_nifti(), [](Bytes& h) { std::memcpy(&h[344], "n+1", 4); });
  expect_refused(dir / "pair.hdr", "wrong NIfTI magic 'n+1' (a .hdr/.img pair has 'ni1'; 'n+1' marks a single .nii file)");
}

TEST(ImageHeaderRobustness, APairWhoseVoxOffsetPassesItsImageFileIsRefused) {
  TempDir dir;
  write_pair(dir / "pair.hdr", sound_nifti(), [](Bytes& h) { put<float>(h, 108, 4096.0f); });
  expect_refused(dir / "pair.hdr", "vox_offset 4096 is beyond the end of 'pair.img' (256 bytes)");
}

TEST(ImageHeaderRobustness, ASoundPairIsRead) {
  TempDir dir;
  write_pair(dir / "pair.hdr", sound_nifti(), [](Bytes&) {});
  EXPECT_EQ(regpipe::read_image(dir / "pair.img").dims, (std::array<uint32_t, 3>{4, 4, 4}));
}

// ---- Sizes beyond memory and beyond 64 bits, any format ----------------------------------

TEST(ImageHeaderRobustness, ANiftiLargerThanMemoryIsRefusedBeforeAllocating) {
  TempDir dir;
  RawNifti n = sound_nifti();
  n.dim = {32767, 32767, 32767};
  n.write(dir / "huge.nii");
  expect_refused(dir / "huge.nii", "its sizes 32767x32767x32767 need about");
}

TEST(ImageHeaderRobustness, ANiftiWhoseSizesOverflowIsRefused) {
  TempDir dir;
  RawNifti n = sound_nifti();
  n.dim = {32767, 32767, 32767, 32767, 32767};
  n.write(dir / "overflow.nii");
  expect_refused(dir / "overflow.nii", "multiply to more than 2^64 voxels");
}

// A MetaImage header: `fields` replace the sound ones of the same name.
std::string metaimage(const std::map<std::string, std::string>& fields) {
  std::map<std::string, std::string> f = {{"NDims", "3"},
                                          {"DimSize", "4 4 4"},
                                          {"ElementSpacing", "1 1 1"},
                                          {"Offset", "0 0 0"},
                                          {"TransformMatrix", "1 0 0 0 1 0 0 0 1"},
                                          {"ElementType", "MET_UCHAR"}};
  for (const auto& [key, value] : fields) f[key] = value;
  std::string text = "ObjectType = Image\n";
  for (const char* key : {"NDims", "DimSize", "ElementSpacing", "Offset", "TransformMatrix", "ElementType"})
    text += std::string(key) + " = " + f[key] + "\n";
  return text + "ElementDataFile = LOCAL\n" + std::string(64, '\0');
}

struct TextCase {
  const char* name;
  std::string text;
  const char* problem;
};

void print_to(const TextCase& c, std::ostream* os) { *os << c.name; }

class HostileMetaImage : public testing::TestWithParam<TextCase> {};

TEST_P(HostileMetaImage, IsRefusedNamingTheFileAndTheProblem) {
  TempDir dir;
  write_text(dir / "hostile.mha", GetParam().text);
  expect_refused(dir / "hostile.mha", GetParam().problem);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, HostileMetaImage,
    testing::Values(
        TextCase{"SizesOverflow", metaimage({{"DimSize", "2000000000 2000000000 2000000000"}}),
                 "its sizes 2000000000x2000000000x2000000000 multiply to more than 2^64 voxels"},
        TextCase{"LargerThanMemory", metaimage({{"DimSize", "100000 100000 100000"}}), "need about"},
        TextCase{"BillionsOfAxes", metaimage({{"NDims", "67399023486"}}),
                 "NDims is '67399023486'; MetaImage files have 1 to 10 axes"},
        TextCase{"NoAxes", metaimage({{"NDims", "0"}}), "NDims is '0'"},
        // MetaIO copies a field name into 255 bytes with strcpy.
        TextCase{"KeyLongerThanMetaIOHolds", "ObjectType = Image\n" + std::string(300, 'K') + " = 1\n",
                 "field 2 of its header has a 300-character name (MetaImage names are at most 254)"},
        // A line without '=': MetaIO read a field of its own out of it (an NDims of billions, a hang).
        TextCase{"KeySpanningLines", "ObjectType = Image\nNDims 3\n" + std::string(400, 'x') + "\nDimSize = 4 4 4\n",
                 "field 2 of its header ('NDims 3') has no '='"},
        TextCase{"NDimsOnALineWithoutEquals", "ObjectType = Image\nNDims \nBinaryDataByteset = -10 20 5\n",
                 "field 2 of its header ('NDims') has no '='"},
        TextCase{"NDimsAfterAColon", metaimage({{"NDims", ": 67399023486"}}), "NDims is '67399023486'"},
        TextCase{"NDimsOfTenBillionAsAnExponent", metaimage({{"NDims", "1e10"}}), "NDims is '1e10'"},
        // MetaIO copies text values (Comment, Name, ...) into 255 bytes with strcpy.
        TextCase{"CommentLongerThanMetaIOHolds", "ObjectType = Image\nComment = " + std::string(400, 'c') + "\n",
                 "field 2 of its header (Comment) has a 400-character value (MetaIO holds at most 254)"},
        // MetaIO's name ends at the first ':', so its value is everything after it.
        TextCase{"ValueAfterAColonHoldingAnEquals",
                 "ObjectType = Image\nComment:" + std::string(200, 'a') + "=" + std::string(200, 'b') + "\n",
                 "field 2 of its header (Comment) has a 401-character value"},
        // MetaIO reads DimSize's third number from the next line and the rest of that line
        // (past the NUL) as that value's end, then a 300-character name from the line after.
        TextCase{"NulHidingTheNextLine",
                 "ObjectType = Image\nNDims = 3\nDimSize = 2 2\n2" + std::string(1, '\0') + "\n" +
                     std::string(300, 'B') + " = 1\n",
                 "field 4 of its header has a NUL byte"},
        TextCase{"CarriageReturnInsideALine", "ObjectType = Image\nNDims\r= 3\n",
                 "field 2 of its header has a carriage return inside its line"},
        TextCase{"HeaderWithoutEnd", "ObjectType = Image\n" + std::string(size_t{1} << 20, 'x'),
                 "its header runs past 1 MiB without ElementDataFile"},
        TextCase{"SpacingZero", metaimage({{"ElementSpacing", "1 0 1"}}), "its voxel size along axis 1 is 0"},
        TextCase{"SpacingNegative", metaimage({{"ElementSpacing", "-1 1 1"}}), "its voxel size along axis 0 is -1"},
        TextCase{"SpacingOfAThousandKilometres", metaimage({{"ElementSpacing", "1 1e9 1"}}), "its voxel size along axis 1 is 1e+09"},
        TextCase{"OriginOf1e31Millimetres", metaimage({{"Offset", "0 0 7.2e31"}}), "its origin along axis 2 is 7.2e+31 mm"},
        // MetaIO stops at a number it cannot parse: the header is malformed.
        TextCase{"SpacingNaN", metaimage({{"ElementSpacing", "1 1 nan"}}), "its MetaImage header is malformed"},
        TextCase{"OriginInfinite", metaimage({{"Offset", "0 1e400 0"}}), "its MetaImage header is malformed"},
        TextCase{"DirectionNaN", metaimage({{"TransformMatrix", "1 0 0 0 nan 0 0 0 1"}}),
                 "its MetaImage header is malformed"},
        TextCase{"DirectionSingular", metaimage({{"TransformMatrix", "1 0 0 1 0 0 0 0 1"}}),
                 "its axis directions are parallel or zero"}),
    [](const auto& info) { return std::string(info.param.name); });

// MetaIO crashes on malformed slice lists and throws std::length_error on some file patterns.
TEST(ImageHeaderRobustness, MetaImageSliceListsAndPatternsAreRefused) {
  TempDir dir;
  for (const std::string& data : {"LOCAL%*", "LIST 2D", "slice%03d.raw 1 4 1"}) {
    std::string text = metaimage({});
    write_text(dir / "list.mha", text.replace(text.find("= LOCAL"), 7, "= " + data));
    expect_refused(dir / "list.mha", "its voxels are in a list or pattern of files (ElementDataFile = " + data + ")");
  }
}

// Windows line ends, a Comment of 254 characters and a full-precision TransformMatrix longer
// than a text field holds: a sound header the checks above must not refuse.
TEST(ImageHeaderRobustness, AMetaImageWithWindowsLineEndsAndLongNumberListsIsRead) {
  TempDir dir;
  const std::string one = "0.99999999999999988897769753748 ", zero = "-1.2246467991473532077e-16 ";
  const std::string matrix = one + zero + zero + zero + one + zero + zero + zero + one;
  ASSERT_GT(matrix.size(), 254u);
  const std::string text = metaimage({{"TransformMatrix", matrix}});
  const size_t data = text.find("LOCAL\n") + 6;
  std::string windows = "Comment = " + std::string(254, 'c') + "\r\n";
  for (char c : text.substr(0, data)) windows += c == '\n' ? std::string("\r\n") : std::string(1, c);
  write_text(dir / "windows.mha", windows + text.substr(data));
  EXPECT_EQ(regpipe::read_image(dir / "windows.mha").dims, (std::array<uint32_t, 3>{4, 4, 4}));
}

// The header is read a block at a time (64 KiB, then 256 KiB, then 1 MiB): a header of many
// Comment lines reaching past the first blocks is read whole, and its voxels are found where
// they start (one byte short is reported as truncated).
TEST(ImageHeaderRobustness, AMetaImageHeaderLongerThanTheFirstBlocksIsRead) {
  TempDir dir;
  const std::string text = metaimage({}), comment = "Comment = " + std::string(200, 'c') + "\n";
  const size_t after_sizes = text.find("ElementSpacing");  // ITK looks for NDims near the start
  for (const size_t comments : {size_t{310}, size_t{320}, size_t{1300}}) {
    SCOPED_TRACE(comments);
    std::string padded = text.substr(0, after_sizes);
    for (size_t i = 0; i < comments; ++i) padded += comment;
    padded += text.substr(after_sizes);
    write_text(dir / "long_header.mha", padded);
    EXPECT_EQ(regpipe::read_image(dir / "long_header.mha").dims, (std::array<uint32_t, 3>{4, 4, 4}));
    write_text(dir / "short_voxels.mha", padded.substr(0, padded.size() - 1));
    const std::string message = message_of([&] { regpipe::read_image(dir / "short_voxels.mha"); });
    EXPECT_NE(message.find("truncated: the file holds 63 of the 64 bytes its header promises"), std::string::npos)
        << message;
  }
}

// ElementDataFile is kept in a std::string by ITK 5.2's MetaImage: a data file 300 characters
// away (a relative path through nested folders) is not refused as a long text value.
TEST(ImageHeaderRobustness, AMetaImageHeaderNamingADataFileByALongPathIsRead) {
  TempDir dir;
  fs::path relative;
  for (int i = 0; i < 5; ++i) relative /= std::string(55, char('a' + i));
  relative /= "voxels.raw";
  ASSERT_GT(relative.string().size(), 254u);
  fs::create_directories(dir / relative.parent_path());
  write_text(dir / relative, std::string(64, '\1'));
  std::string header = metaimage({});
  header = header.substr(0, header.find("ElementDataFile")) + "ElementDataFile = " + relative.string() + "\n";
  write_text(dir / "long.mhd", header);
  EXPECT_EQ(regpipe::read_image(dir / "long.mhd").dims, (std::array<uint32_t, 3>{4, 4, 4}));
}

// A NRRD header with attached raw data: `sizes`, `directions` and `origin` as NRRD writes them.
std::string nrrd(const std::string& sizes, const std::string& directions = "(1,0,0) (0,1,0) (0,0,1)",
                 const std::string& origin = "(0,0,0)") {
  return "NRRD0004\ntype: uint8\ndimension: 3\nspace: left-posterior-superior\nsizes: " + sizes +
         "\nspace directions: " + directions + "\nspace origin: " + origin +
         "\nencoding: raw\n\n" + std::string(64, '\0');
}

class HostileNrrd : public testing::TestWithParam<TextCase> {};

TEST_P(HostileNrrd, IsRefusedNamingTheFileAndTheProblem) {
  TempDir dir;
  write_text(dir / "hostile.nrrd", GetParam().text);
  expect_refused(dir / "hostile.nrrd", GetParam().problem);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, HostileNrrd,
    testing::Values(TextCase{"LargerThanMemory", nrrd("100000 100000 100000"), "need about"},
                    TextCase{"SizesOverflow", nrrd("4294967296 4294967296 4294967296"),
                             "too large to be represented in type size_t"},
                    // teem refuses a direction or origin it cannot parse itself.
                    TextCase{"DirectionNaN", nrrd("4 4 4", "(1e7,0,0) (0,1e7,0) (0,0,nan)"),
                             "trouble parsing space directions info"},

                    TextCase{"DirectionsParallel", nrrd("4 4 4", "(1,0,0) (2,0,0) (0,0,1)"),
                             "its axis directions are parallel or zero"},
                    TextCase{"OriginNaN", nrrd("4 4 4", "(1,0,0) (0,1,0) (0,0,1)", "(0,nan,0)"),
                             "couldn't parse origin"}),
    [](const auto& info) { return std::string(info.param.name); });

// The memory budget comes from the machine, or from REGPIPE_IMAGE_MEMORY_MB where set.
TEST(ImageHeaderRobustness, TheMemoryBudgetCanBeSetForImageReads) {
  TempDir dir;
  write_text(dir / "large.mha", metaimage({{"DimSize", "256 256 256"}}));
  setenv("REGPIPE_IMAGE_MEMORY_MB", "64", 1);
  const std::string message = message_of([&] { regpipe::read_image(dir / "large.mha"); });
  unsetenv("REGPIPE_IMAGE_MEMORY_MB");
  EXPECT_NE(message.find("its sizes 256x256x256 need about 0.151 GB of memory to read, more than the "
                         "0.0671 GB available (REGPIPE_IMAGE_MEMORY_MB)"),
            std::string::npos)
      << message;
}

// Through the CLI: `regpipe run` stops with status 2 and the reason before it registers or
// writes anything.
TEST(ImageHeaderRobustness, TheCliRefusesAHostileImageWithStatus2AndNoResult) {
  TempDir dir;
  sound_nifti().write(dir / "moving.nii");
  write_bytes(dir / "reference.nii", nifti_bytes(sound_nifti(), [](Bytes& h) { put<float>(h, 280, kNaN); }));
  write_text(dir / "pipeline.yaml",
             "inputs: {reference: reference.nii, moving: moving.nii}\noutputs: {dir: out}\n");
  std::string output;
  const int status = regpipe::test::run_command(
      "'" + regpipe::test::regpipe_cli().string() + "' run '" + (dir / "pipeline.yaml").string() + "'", &output);
  EXPECT_EQ(status, 2) << output;
  EXPECT_NE(output.find("'" + (dir / "reference.nii").string() + "': its sform's srow_x[0] is nan"),
            std::string::npos)
      << output;
  EXPECT_FALSE(fs::exists(dir / "out" / "transform.mat"));
}

}  // namespace
