// The removal at termination (temporary_outputs.hpp), in a child process each (it is for good):
// the folders a run made go (a temporary one with what is inside, the others only while
// empty), folders it did not make stay, and nothing is made or published afterwards.
#include <regpipe/host/temporary_outputs.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;
using regpipe::test::TempDir;

namespace {

// Exits with 0 when `check` holds, else with 1 (a death test's statement).
void exit_with(bool check) { std::exit(check ? 0 : 1); }

}  // namespace

TEST(TemporaryOutputs, TerminationRemovesTheFoldersARunMadeAndWhatIsInsideItsTemporaries) {
  TempDir dir;
  fs::create_directory(dir / "earlier");
  EXPECT_EXIT(
      {
        std::error_code ec;
        const auto made = regpipe::make_output_folders(dir / "a" / "b", ec);
        regpipe::make_temporary_folder(dir / "a" / "b" / ".staging", ec);
        std::ofstream(dir / "a" / "b" / ".staging" / "half.nii.gz") << "half";
        regpipe::make_temporary_folder(dir / "earlier" / ".x.partial-1-0", ec);
        std::ofstream(dir / "earlier" / ".x.partial-1-0" / "x.mat") << "1 0 0 0";
        regpipe::remove_temporaries_for_exit();
        exit_with(made.size() == 2 && made.front() == dir / "a" / "b" && !fs::exists(dir / "a") &&
                  fs::is_directory(dir / "earlier") && fs::is_empty(dir / "earlier"));
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(TemporaryOutputs, AMadeFolderHoldingPublishedFilesStays) {
  TempDir dir;
  EXPECT_EXIT(
      {
        std::error_code ec;
        regpipe::make_output_folders(dir / "out", ec);
        regpipe::publish_outputs([&] { std::ofstream(dir / "out" / "transform.mat") << "1"; });
        regpipe::remove_temporaries_for_exit();
        exit_with(fs::is_regular_file(dir / "out" / "transform.mat"));
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(TemporaryOutputs, AfterTheRemovalAThreadThatWouldMakeOrPublishWaitsForTheEnd) {
  TempDir dir;
  EXPECT_EXIT(
      {
        regpipe::remove_temporaries_for_exit();
        std::atomic<int> returned{0};
        bool published = false;
        std::thread([&] {
          std::error_code ec;
          regpipe::make_temporary_folder(dir / ".t", ec);
          ++returned;
        }).detach();
        std::thread([&] {
          std::error_code ec;
          regpipe::make_output_folders(dir / "out", ec);
          ++returned;
        }).detach();
        std::thread([&] {
          regpipe::publish_outputs([&] { published = true; });
          ++returned;
        }).detach();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        exit_with(returned == 0 && !published && fs::is_empty(dir.path()));
      },
      ::testing::ExitedWithCode(0), "");
}
