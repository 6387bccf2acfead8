// A batch writes each result's transform files on worker threads while others read images:
// after prepare_transform_io, ITK's transform IO is used from several threads at once.
#include <regpipe/host/image.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <atomic>
#include <thread>

namespace fs = std::filesystem;
using regpipe::test::TempDir;

TEST(ConcurrentTransformIo, ThreadsWriteAndReadTransformsBesideAnImageReader) {
  TempDir dir;
  regpipe::write_image(regpipe::make_head_phantom({24, 24, 24}, 4.0, 0), dir / "image.nii.gz");
  regpipe::prepare_transform_io();  // as the batch does, before its threads
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        const Eigen::Matrix4d m = regpipe::params_to_matrix(
            {0.01 * i, 0.02 * t, 0, double(i), double(t), 1, 1, 1, 1, 0, 0, 0}, {0, 0, 0});
        for (const char* extension : {".tfm", ".mat"}) {
          const fs::path path = dir / ("t" + std::to_string(t) + extension);
          regpipe::write_itk_transform(path, m);
          if (regpipe::read_itk_transform(path) != m) ++mismatches;
        }
      }
    });
  threads.emplace_back([&] {
    for (int i = 0; i < 10; ++i) regpipe::read_image(dir / "image.nii.gz");
  });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}
