// A .nii.gz regpipe writes is several gzip members compressed in parallel (issue 17): nibabel
// (Python's gzip) reads it whole, to the voxels, affine and header of the same image written
// uncompressed. Skips without nibabel under /usr/bin/python3 (Debian's python3-nibabel).
#include <regpipe/host/image.hpp>

#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

constexpr const char* kPython = "/usr/bin/python3";

// Prints: whether the voxels are equal, the largest affine difference, whether the 348-byte
// headers are equal, the voxel sum, and how many gzip members the .nii.gz holds.
constexpr const char* kCompare = R"(import sys, zlib, nibabel as nib, numpy as np
gz, plain = nib.load(sys.argv[1]), nib.load(sys.argv[2])
a, b = np.asarray(gz.dataobj), np.asarray(plain.dataobj)
print(int(a.shape == b.shape and np.array_equal(a, b)))
print(np.abs(gz.affine - plain.affine).max())
print(int(gz.header.binaryblock == plain.header.binaryblock))
print(float(a.astype(np.float64).sum()))
data, members = open(sys.argv[1], 'rb').read(), 0
while data:
    d = zlib.decompressobj(31)
    d.decompress(data)
    data, members = d.unused_data, members + 1
print(members)
)";

TEST(GzipMembersInterop, NibabelReadsAMultiMemberNiftiWhole) {
  std::string out;
  if (run_command(std::string(kPython) + " -c 'import nibabel'", &out) != 0)
    GTEST_SKIP() << kPython << " cannot import nibabel (Debian: python3-nibabel): " << out;
  regpipe::test::TempDir dir;
  regpipe::Image image;
  image.dims = {90, 100, 60};  // 2.2 MB of float32: three members
  image.voxel_to_world << -1.5, 0, 0, 60, 0, 1.2, 0, -70, 0, 0, 2.0, -40, 0, 0, 0, 1;
  image.data.resize(image.voxel_count());
  double sum = 0.0;
  for (size_t i = 0; i < image.data.size(); ++i) {
    image.data[i] = float(std::fmod(double(i) * 0.37, 251.0));
    sum += double(image.data[i]);
  }
  regpipe::write_image(image, dir / "image.nii.gz");
  regpipe::write_image(image, dir / "image.nii");

  std::ofstream(dir / "compare.py") << kCompare;
  ASSERT_EQ(run_command(std::string(kPython) + " '" + (dir / "compare.py").string() + "' '" +
                            (dir / "image.nii.gz").string() + "' '" + (dir / "image.nii").string() + "'",
                        &out),
            0)
      << out;
  std::istringstream words(out);
  std::vector<double> v;
  for (double x; words >> x;) v.push_back(x);
  ASSERT_EQ(v.size(), 5u) << out;
  EXPECT_EQ(v[0], 1.0) << "voxels";
  EXPECT_EQ(v[1], 0.0) << "affine";
  EXPECT_EQ(v[2], 1.0) << "header";
  EXPECT_NEAR(v[3], sum, 1e-9 * sum) << "nibabel's voxels are regpipe's";
  EXPECT_EQ(v[4], 3.0) << "gzip members";
}

}  // namespace
