// `regpipe apply` with displacement fields (ITK/ANTs *Warp.nii.gz) in its -t chain: a constant
// field is the translation it holds, for every interpolation; a field and an affine chain in
// regpipe's order (the order the image goes through them) and not the other; a 4D series goes
// volume by volume; bad fields are refused with exit status 2 and nothing written.
#include <regpipe/host/displacement_field_io.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/test_support.hpp"

#include <Eigen/Dense>
#include <fstream>
#include <limits>

namespace fs = std::filesystem;
using regpipe::Image;
using regpipe::test::run_command;
using regpipe_common::DisplacementField;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

float max_difference(const Image& a, const Image& b) {
  EXPECT_EQ(a.dims, b.dims);
  float largest = 0.0f;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i)
    largest = std::max(largest, std::abs(a.data[i] - b.data[i]));
  return largest;
}

Eigen::Matrix4d translation(const Eigen::Vector3d& shift) {
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topRightCorner<3, 1>() = shift;
  return m;
}

// A field holding the same vector u everywhere (LPS mm), on `grid`'s grid grown by `margin`
// voxels on every side (a field is zero outside its grid).
DisplacementField constant_field(const Image& grid, const Eigen::Vector3d& u, int margin = 0) {
  DisplacementField field;
  field.geometry.dims = {int(grid.dims[0]) + 2 * margin, int(grid.dims[1]) + 2 * margin,
                         int(grid.dims[2]) + 2 * margin};
  Eigen::Matrix4d v2w = grid.voxel_to_world;
  const Eigen::Vector4d corner(-margin, -margin, -margin, 1.0);
  v2w.topRightCorner<3, 1>() = (grid.voxel_to_world * corner).head<3>();
  for (int i = 0; i < 16; ++i) field.geometry.voxel_to_world[i] = v2w(i / 4, i % 4);
  for (size_t v = 0; v < regpipe_common::voxel_count(field.geometry.dims); ++v)
    for (int c = 0; c < 3; ++c) field.vectors.push_back(float(u[c]));
  return field;
}

class ApplyFieldCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string out;
    ASSERT_EQ(run_command(regpipe::test::regpipe_cli().string() + " phantom " + quoted(dir_ / "demo") +
                              " --size 40 --voxel-mm 4",
                          &out),
              0)
        << out;
    reference_ = regpipe::read_image(demo("reference.nii.gz"));
  }
  fs::path demo(const std::string& name) const { return dir_ / "demo" / name; }
  fs::path operator/(const std::string& name) const { return dir_ / name; }
  int regpipe(const std::string& args, std::string* out) {
    return run_command(regpipe::test::regpipe_cli().string() + " " + args, out);
  }
  std::string apply_command(const std::string& args, const std::string& output, const fs::path& input) const {
    return "apply -i " + quoted(input) + " -r " + quoted(demo("reference.nii.gz")) + " -o " +
           quoted(dir_ / output) + " " + args;
  }
  // The phantom's moving image (a rotated grid) onto its reference with ARGS; read back.
  Image apply(const std::string& args, const std::string& output = "out.nii.gz", fs::path input = {}) {
    if (input.empty()) input = demo("moving.nii.gz");
    std::string out;
    const std::string command = apply_command("-q --datatype float32 " + args, output, input);
    EXPECT_EQ(regpipe(command, &out), 0) << command << "\n" << out;
    return regpipe::read_image(dir_ / output);
  }
  // Exit status 2, `expected` in the message, no output.
  void expect_refused(const std::string& args, const std::string& expected) {
    std::string out;
    const std::string command = apply_command(args, "refused.nii.gz", demo("moving.nii.gz"));
    EXPECT_EQ(regpipe(command, &out), 2) << command << "\n" << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
    EXPECT_FALSE(fs::exists(dir_ / "refused.nii.gz"));
  }
  regpipe::test::TempDir dir_;
  Image reference_;
};

}  // namespace

TEST_F(ApplyFieldCliTest, AConstantFieldIsTheTranslationItHolds) {
  // Not a whole number of 4 mm voxels, and the moving grid is rotated: generic positions.
  const Eigen::Vector3d u(5.3, -2.1, 3.7);
  regpipe::write_displacement_field(constant_field(reference_, u), *this / "1Warp.nii.gz");
  regpipe::write_itk_transform(*this / "shift.tfm", translation(u));
  for (const char* interp : {"nearest", "trilinear", "sinc", "bspline", "label"}) {
    const std::string i = std::string("--interp ") + interp;
    const Image through_field = apply(i + " -t " + quoted(*this / "1Warp.nii.gz"), "field.nii.gz");
    const Image through_affine =
        apply(i + " --resampler resample.cpu -t " + quoted(*this / "shift.tfm"), "affine.nii.gz");
    // The positions agree to double rounding, then are rounded to float (one ulp at index 40
    // is 3.8e-6 voxel), which the phantom's edges, up to ~1000 per voxel, turn into 4e-3.
    EXPECT_LE(max_difference(through_field, through_affine), 5e-3f) << interp;
    EXPECT_TRUE(through_field.voxel_to_world.isApprox(reference_.voxel_to_world, 1e-12)) << interp;
  }
}

TEST_F(ApplyFieldCliTest, ChainsFieldsAndAffinesInTheOrderTheImageGoesThroughThem) {
  // A rotation A and a constant field u: "-t A -t u" is out(p) = in(A(p + u)), the affine chain
  // "-t A -t T_u"; "-t u -t A" is in(A p + u), the chain "-t T_u -t A".
  const Eigen::Vector3d u(6.5, 3.0, -4.5);
  const Eigen::Matrix4d a =
      regpipe::params_to_matrix({0.08, -0.05, 0.12, 2.0, -3.0, 1.0, 1, 1, 1, 0, 0, 0}, {0, 0, 0});
  // Grown by 10 voxels (40 mm): A moves the reference's corners up to ~20 mm, and u must hold
  // wherever the points go to compare with the translation, which holds everywhere.
  regpipe::write_displacement_field(constant_field(reference_, u, 10), *this / "u_Warp.nii.gz");
  regpipe::write_itk_transform(*this / "a.tfm", a);
  regpipe::write_itk_transform(*this / "u.tfm", translation(u));
  const std::string tfm = quoted(*this / "a.tfm"), field = quoted(*this / "u_Warp.nii.gz"),
                    shift = quoted(*this / "u.tfm");
  const Image affine_then_field = apply("-t " + tfm + " -t " + field, "af.nii.gz");
  const Image field_then_affine = apply("-t " + field + " -t " + tfm, "fa.nii.gz");
  const Image expected_af = apply("--resampler resample.cpu -t " + tfm + " -t " + shift, "ea.nii.gz");
  const Image expected_fa = apply("--resampler resample.cpu -t " + shift + " -t " + tfm, "ef.nii.gz");
  EXPECT_LE(max_difference(affine_then_field, expected_af), 5e-3f);  // as above
  EXPECT_LE(max_difference(field_then_affine, expected_fa), 5e-3f);
  EXPECT_GT(max_difference(affine_then_field, field_then_affine), 10.0f) << "the order matters";
  // The warp: prefix names a field; ITK's NIfTI reader needs its name to say NIfTI.
  const Image prefixed = apply("-t " + tfm + " -t warp:" + field, "p.nii.gz");
  EXPECT_EQ(max_difference(prefixed, affine_then_field), 0.0f);
  fs::copy_file(*this / "u_Warp.nii.gz", *this / "u_field");
  expect_refused("-t warp:" + quoted(*this / "u_field"), "name it .nii.gz or .nii");
}

TEST_F(ApplyFieldCliTest, ASeriesGoesThroughTheFieldVolumeByVolume) {
  Image first = regpipe::read_image(demo("moving.nii.gz"));
  Image second = first;
  for (float& v : second.data) v = 2.0f * v + 1.0f;
  regpipe::ImageVolumes series;
  series.volumes = {first, second};
  series.volume_step = 2.5;
  regpipe::write_image_volumes(series, *this / "series.nii.gz");
  regpipe::write_displacement_field(constant_field(reference_, {4.0, 1.0, -2.0}), *this / "w.nii.gz");
  const std::string t = "-t " + quoted(*this / "w.nii.gz");
  std::string log;
  const std::string command =
      apply_command("-q --datatype float32 " + t, "series_out.nii.gz", *this / "series.nii.gz");
  ASSERT_EQ(regpipe(command, &log), 0) << log;
  const regpipe::ImageVolumes out = regpipe::read_image_volumes(*this / "series_out.nii.gz");
  ASSERT_EQ(out.volumes.size(), 2u);
  EXPECT_DOUBLE_EQ(out.volume_step, 2.5);
  regpipe::write_image(second, *this / "second.nii.gz");
  EXPECT_EQ(max_difference(out.volumes[0], apply(t, "one.nii.gz", demo("moving.nii.gz"))), 0.0f);
  EXPECT_EQ(max_difference(out.volumes[1], apply(t, "two.nii.gz", *this / "second.nii.gz")), 0.0f);
}

TEST_F(ApplyFieldCliTest, RefusesBadFieldsNamingTheFileAndTheProblem) {
  expect_refused("-t " + quoted(*this / "missing_1Warp.nii.gz"), "no such file");
  // A scalar image given as a transform: a NIfTI file, so read as a field, and refused as one.
  expect_refused("-t " + quoted(demo("reference.nii.gz")),
                 "3D scalar image (40x40x40), not a displacement field");
  DisplacementField nan = constant_field(reference_, {1.0, 2.0, 3.0});
  regpipe::write_displacement_field(nan, *this / "nan.nii");
  // Voxel 0's z component: the third block of the component-major data.
  {
    std::fstream file(*this / "nan.nii", std::ios::in | std::ios::out | std::ios::binary);
    float vox_offset = 0.0f;
    file.seekg(108);
    file.read(reinterpret_cast<char*>(&vox_offset), sizeof(vox_offset));
    file.seekp(std::streamoff(vox_offset) + std::streamoff(4 * 2 * reference_.voxel_count()));
    const float value = std::numeric_limits<float>::quiet_NaN();
    file.write(reinterpret_cast<const char*>(&value), sizeof(value));
  }
  expect_refused("-t " + quoted(*this / "nan.nii"), "vector at voxel (0, 0, 0)");
  // regpipe transform chains affines only.
  std::string out;
  regpipe::write_displacement_field(constant_field(reference_, {1.0, 0.0, 0.0}), *this / "ok.nii.gz");
  EXPECT_EQ(regpipe("transform " + quoted(*this / "ok.nii.gz") + " -o " + quoted(*this / "x.tfm"), &out), 2)
      << out;
  EXPECT_NE(out.find("is a displacement field"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(*this / "x.tfm"));
}
