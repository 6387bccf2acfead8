// Images read and written by several threads at once, as `regpipe run` (reference and moving
// image read together) and batch mode (read-ahead and write-behind threads) do: each read must
// give its own file's header and voxels, every time. (The crash of ITK's globals made at a
// process's first reads needs many processes to show: tests/cli/parallel_io_stress_test.cpp.)
#include <regpipe/host/image.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using regpipe::Image;

namespace {

// A volume whose every voxel value encodes its file (`seed`) and position.
Image numbered_volume(uint32_t nx, uint32_t ny, uint32_t nz, float seed) {
  Image image;
  image.dims = {nx, ny, nz};
  image.voxel_to_world.diagonal().head<3>() << 1.5, 2.0, 2.5;
  image.data.resize(image.voxel_count());
  for (size_t i = 0; i < image.data.size(); ++i) image.data[i] = seed + float(i % 1000);
  return image;
}

bool same_image(const Image& a, const Image& b) {
  return a.dims == b.dims && a.data == b.data && a.voxel_to_world.isApprox(b.voxel_to_world);
}

TEST(ConcurrentImageIo, ThreadsReadingAndWritingEachGetTheirOwnFile) {
  regpipe::test::TempDir dir;
  // Several formats, since a batch may mix them; different sizes, so a header mixed up
  // between threads shows.
  const std::vector<std::pair<fs::path, Image>> files = {
      {dir / "a.nii.gz", numbered_volume(20, 18, 16, 1000.0f)},
      {dir / "b.nii", numbered_volume(17, 21, 15, 2000.0f)},
      {dir / "c.nrrd", numbered_volume(16, 16, 19, 3000.0f)},
      {dir / "d.mha", numbered_volume(15, 19, 17, 4000.0f)},
  };
  for (const auto& [path, image] : files) regpipe::write_image(image, path);

  constexpr int kReaders = 4, kReadsEach = 150, kWrites = 40;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kReaders; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kReadsEach; ++i) {
        const auto& [path, expected] = files[(t + i) % files.size()];
        try {
          if (!same_image(regpipe::read_image(path), expected)) ++wrong;
        } catch (const std::exception&) {
          ++failed;
        }
      }
    });
  threads.emplace_back([&] {  // a write-behind thread, as in batch mode
    for (int i = 0; i < kWrites; ++i) {
      const fs::path out = dir / ("out_" + std::to_string(i % 4) + ".nii.gz");
      try {
        regpipe::write_image(files[i % files.size()].second, out);
      } catch (const std::exception&) {
        ++failed;
      }
    }
  });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0) << "reads that returned another file's header or voxels";
  EXPECT_EQ(failed.load(), 0) << "reads or writes that threw";
}

}  // namespace
