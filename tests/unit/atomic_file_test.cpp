// write_atomically: temporaries next to the destination with its extension, rename on
// success, nothing left on failure.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/error.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fs = std::filesystem;
using regpipe::full_extension;
using regpipe::UserError;
using regpipe::write_atomically;
using regpipe::write_text_atomically;
using regpipe::test::TempDir;

namespace {

std::string contents(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST(AtomicFile, FullExtensionKeepsCompressionSuffix) {
  EXPECT_EQ(full_extension("a/b/img.nii.gz"), ".nii.gz");
  EXPECT_EQ(full_extension("x.y.NII.GZ"), ".NII.GZ");
  EXPECT_EQ(full_extension("t.mat"), ".mat");
  EXPECT_EQ(full_extension("README"), "");
}

TEST(AtomicFile, TemporaryKeepsItsNameInAHiddenFolderOfTheDestinationFolder) {
  TempDir dir;
  fs::path seen;
  write_atomically(dir / "out.nii.gz", [&](const fs::path& tmp) {
    seen = tmp;
    std::ofstream(tmp) << "data";
  });
  EXPECT_EQ(seen.parent_path().parent_path(), dir.path());
  EXPECT_EQ(seen.parent_path().filename().string().rfind(".out.partial-", 0), 0u) << seen;
  EXPECT_EQ(seen.filename(), "out.nii.gz");
  EXPECT_EQ(contents(dir / "out.nii.gz"), "data");
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"out.nii.gz"});
}

TEST(AtomicFile, FailedWriteRemovesTheTemporaryAndKeepsTheOldFile) {
  TempDir dir;
  write_text_atomically(dir / "report.json", "old");
  EXPECT_THROW(write_atomically(dir / "report.json",
                                [](const fs::path& tmp) {
                                  std::ofstream(tmp) << "half";
                                  throw std::runtime_error("disk full");
                                }),
               std::runtime_error);
  EXPECT_EQ(contents(dir / "report.json"), "old");
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"report.json"});
}

TEST(AtomicFile, CompanionsAreRenamedWithTheMainFile) {
  TempDir dir;
  write_atomically(dir / "pair.hdr", {".img"}, [](const fs::path& tmp) {
    std::ofstream(tmp) << "header";
    fs::path data = tmp;
    std::ofstream(data.replace_extension(".img")) << "voxels";
  });
  EXPECT_EQ(contents(dir / "pair.hdr"), "header");
  EXPECT_EQ(contents(dir / "pair.img"), "voxels");
  EXPECT_EQ(listing(dir.path()), (std::vector<std::string>{"pair.hdr", "pair.img"}));
}

TEST(AtomicFile, CompanionsAreRemovedOnFailure) {
  TempDir dir;
  EXPECT_THROW(write_atomically(dir / "pair.hdr", {".img"},
                                [](const fs::path& tmp) {
                                  fs::path data = tmp;
                                  std::ofstream(data.replace_extension(".img")) << "voxels";
                                  throw UserError("header failed");
                                }),
               UserError);
  EXPECT_TRUE(listing(dir.path()).empty());
}

TEST(AtomicFile, MissingFolderIsAUserErrorNamingIt) {
  TempDir dir;
  bool called = false;
  try {
    write_atomically(dir / "no" / "x.txt", [&](const fs::path&) { called = true; });
    FAIL() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("folder '" + (dir / "no").string() + "' does not exist"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(called);
}

TEST(AtomicFile, ParentThatIsAFileIsAUserError) {
  TempDir dir;
  write_text_atomically(dir / "file", "x");
  try {
    write_text_atomically(dir / "file" / "x.txt", "y");
    FAIL() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + (dir / "file").string() + "' is not a folder"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"file"});
}

TEST(AtomicFile, ReplacingADirectoryFailsCleanly) {
  TempDir dir;
  fs::create_directory(dir / "taken.txt");
  fs::create_directory(dir / "taken.txt" / "inside");
  EXPECT_THROW(write_text_atomically(dir / "taken.txt", "text"), UserError);
  EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"taken.txt"});
}
