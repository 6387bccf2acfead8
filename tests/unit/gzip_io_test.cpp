// The gzip layer under .nii.gz reading and writing (issue 17): read_decompressed gives what
// zlib's gzread gives (ITK's and niftilib's reader) for one member, several members (ours and
// gzip(1)'s), a plain file, trailing bytes and damage, with zlib's own messages; gzip_members
// writes a stream that zlib and gzip(1) read back whole, the same bytes whatever the threads.
#include <regpipe/host/error.hpp>

#include "image/decompressed_file.hpp"
#include "image/parallel_gzip.hpp"

#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using regpipe::test::TempDir;
using namespace regpipe::image_detail;

namespace {

// Compressible but not trivially so: a smooth ramp with noise, like image voxels.
std::vector<unsigned char> sample_bytes(size_t n) {
  std::vector<unsigned char> bytes(n);
  uint32_t state = 12345;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    bytes[i] = static_cast<unsigned char>((i / 4096) + (state >> 29));
  }
  return bytes;
}

void write_bytes(const fs::path& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::vector<unsigned char> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

// What zlib's gzread (ITK's reader) makes of a file: its contents, or its error message.
struct ZlibRead {
  std::vector<unsigned char> bytes;
  std::string error;
};
ZlibRead zlib_read(const fs::path& path) {
  ZlibRead out;
  gzFile gz = gzopen(path.c_str(), "rb");
  std::vector<unsigned char> chunk(1 << 16);
  for (int n; (n = gzread(gz, chunk.data(), unsigned(chunk.size()))) != 0;) {
    if (n < 0) {
      int code = 0;
      out.error = gzerror(gz, &code);
      break;
    }
    out.bytes.insert(out.bytes.end(), chunk.begin(), chunk.begin() + n);
  }
  gzclose(gz);
  return out;
}

std::vector<unsigned char> contents_of(const DecompressedFile& f) {
  return std::vector<unsigned char>(f.bytes.get(), f.bytes.get() + f.kept);
}

void gzip_with_zlib(const fs::path& path, const std::vector<unsigned char>& bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  gzwrite(gz, bytes.data(), unsigned(bytes.size()));
  gzclose(gz);
}

TEST(GzipRead, SingleMemberAsZlibReadsIt) {
  TempDir dir;
  const auto bytes = sample_bytes(3 << 20);
  gzip_with_zlib(dir / "one.gz", bytes);
  // Needing half: the buffer is sized from the trailer's length, and all of it is kept.
  const auto read = read_decompressed(dir / "one.gz", bytes.size() / 2);
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->gzipped);
  EXPECT_FALSE(read->damage);
  EXPECT_EQ(read->size, bytes.size());
  EXPECT_EQ(contents_of(*read), bytes);
}

TEST(GzipRead, EveryMemberOfOursAndOfGzip1) {
  TempDir dir;
  const auto bytes = sample_bytes((5 << 20) + 12345);  // 6 members of ours, the last short
  write_bytes(dir / "ours.gz", gzip_members(bytes.data(), bytes.size(), kGzipLevel, 3));
  // gzip(1) appends a member per file: `gzip -c a >> x; gzip -c b >> x` (its manual).
  write_bytes(dir / "a", std::vector<unsigned char>(bytes.begin(), bytes.begin() + 1000000));
  write_bytes(dir / "b", std::vector<unsigned char>(bytes.begin() + 1000000, bytes.end()));
  const std::string d = "'" + dir.path().string() + "'";
  ASSERT_EQ(std::system(("gzip -c " + d + "/a > " + d + "/gzip1.gz && gzip -c " + d + "/b >> " + d + "/gzip1.gz").c_str()), 0);
  for (const char* name : {"ours.gz", "gzip1.gz"}) {
    SCOPED_TRACE(name);
    const auto read = read_decompressed(dir / name, bytes.size() * 3 / 4);  // the buffer grows
    ASSERT_TRUE(read);
    EXPECT_FALSE(read->damage);
    EXPECT_EQ(contents_of(*read), bytes);
    EXPECT_EQ(zlib_read(dir / name).bytes, bytes);
  }
}

TEST(GzipRead, PlainFilesAndTrailingBytesAsZlibReadsThem) {
  TempDir dir;
  const auto bytes = sample_bytes(100000);
  write_bytes(dir / "plain.nii.gz", bytes);  // not gzipped: zlib reads it as it is
  const auto plain = read_decompressed(dir / "plain.nii.gz", 0);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->gzipped);
  EXPECT_EQ(contents_of(*plain), bytes);

  // Bytes after the last member that do not start another: zlib ignores them.
  auto gz = gzip_members(bytes.data(), bytes.size(), kGzipLevel, 1);
  for (const char c : std::string("\0\0\0padding", 10)) gz.push_back(static_cast<unsigned char>(c));
  write_bytes(dir / "trailing.gz", gz);
  const auto trailing = read_decompressed(dir / "trailing.gz", 0);
  ASSERT_TRUE(trailing);
  EXPECT_FALSE(trailing->damage);
  EXPECT_EQ(contents_of(*trailing), bytes);
  EXPECT_EQ(zlib_read(dir / "trailing.gz").bytes, bytes);

  EXPECT_FALSE(read_decompressed(dir / "absent.gz", 0));
}

TEST(GzipRead, DamageIsReportedInZlibsWordsAndACutStreamIsShortAsZlibReadsIt) {
  TempDir dir;
  const auto bytes = sample_bytes(2 << 20);
  const auto gz = gzip_members(bytes.data(), bytes.size(), kGzipLevel, 2);
  auto flipped = gz;
  flipped[gz.size() - 6] ^= 0xff;  // the last member's CRC
  write_bytes(dir / "crc.gz", flipped);
  auto cut = gz;
  cut.resize(gz.size() - 1000);  // the second member cut short
  write_bytes(dir / "cut.gz", cut);

  const auto crc = read_decompressed(dir / "crc.gz", bytes.size());
  ASSERT_TRUE(crc);
  ASSERT_TRUE(crc->damage);
  // zlib puts the path in front; regpipe's message has its words only.
  EXPECT_EQ((dir / "crc.gz").string() + ": " + *crc->damage, zlib_read(dir / "crc.gz").error);
  EXPECT_EQ(*crc->damage, "incorrect data check");

  // zlib's gzread returns a cut stream's bytes without an error (its Z_BUF_ERROR is not one):
  // short contents, which the completeness check calls truncated.
  const auto short_read = read_decompressed(dir / "cut.gz", bytes.size());
  ASSERT_TRUE(short_read);
  EXPECT_FALSE(short_read->damage);
  const ZlibRead zlib = zlib_read(dir / "cut.gz");
  EXPECT_TRUE(zlib.error.empty()) << zlib.error;
  EXPECT_EQ(contents_of(*short_read), zlib.bytes);
  EXPECT_LT(short_read->size, bytes.size());
}

TEST(GzipRead, ContentsBeyondTwiceTheNeedAreCountedNotKept) {
  TempDir dir;
  const std::vector<unsigned char> zeros(5 << 20, 0);
  gzip_with_zlib(dir / "big.gz", zeros);
  const auto read = read_decompressed(dir / "big.gz", 1000);  // kept: 2 x max(1000, 1 MiB)
  ASSERT_TRUE(read);
  EXPECT_FALSE(read->damage);
  EXPECT_EQ(read->size, zeros.size());
  EXPECT_EQ(read->kept, uint64_t(2) << 20);
}

TEST(GzipWrite, TheSameBytesWhateverTheThreadsAndZlibReadsThemWhole) {
  TempDir dir;
  const auto bytes = sample_bytes((4 << 20) + 3);
  const auto one = gzip_members(bytes.data(), bytes.size(), kGzipLevel, 1);
  EXPECT_EQ(gzip_members(bytes.data(), bytes.size(), kGzipLevel, 4), one);
  EXPECT_EQ(gzip_members(bytes.data(), bytes.size(), kGzipLevel, 64), one);
  EXPECT_LT(one.size(), bytes.size() * 7 / 10);  // it does compress (3 random bits a byte)
  write_gzip_file(dir / "x.gz", bytes.data(), bytes.size(), dir / "x.gz");
  EXPECT_EQ(file_bytes(dir / "x.gz"), one);
  EXPECT_EQ(zlib_read(dir / "x.gz").bytes, bytes);
  const std::string d = "'" + dir.path().string() + "'";
  ASSERT_EQ(std::system(("gzip -t " + d + "/x.gz && gzip -dc " + d + "/x.gz > " + d + "/x").c_str()), 0);
  EXPECT_EQ(file_bytes(dir / "x"), bytes);

  // Empty input: one empty member, still a valid gzip file.
  write_gzip_file(dir / "empty.gz", nullptr, 0, dir / "empty.gz");
  EXPECT_TRUE(zlib_read(dir / "empty.gz").bytes.empty());
  EXPECT_TRUE(zlib_read(dir / "empty.gz").error.empty());
}

TEST(GzipWrite, ConcurrentWritersEachGetTheirWholeFile) {
  TempDir dir;
  std::vector<std::vector<unsigned char>> inputs;
  for (size_t i = 0; i < 4; ++i) inputs.push_back(sample_bytes((3 << 20) + i * 7777));
  std::vector<std::thread> writers;
  for (size_t i = 0; i < inputs.size(); ++i)
    writers.emplace_back([&, i] {
      const fs::path path = dir / (std::to_string(i) + ".gz");
      write_gzip_file(path, inputs[i].data(), inputs[i].size(), path);
    });
  for (auto& w : writers) w.join();
  for (size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ(zlib_read(dir / (std::to_string(i) + ".gz")).bytes, inputs[i]);
}

TEST(GzipWrite, AFileThatCannotBeWrittenIsAUserErrorNamingTheOutput) {
  TempDir dir;
  const auto bytes = sample_bytes(1000);
  try {
    write_gzip_file(dir / "no" / "x.gz", bytes.data(), bytes.size(), "out/registered.nii.gz");
    FAIL() << "no error";
  } catch (const regpipe::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write 'out/registered.nii.gz': could not create x.gz"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
