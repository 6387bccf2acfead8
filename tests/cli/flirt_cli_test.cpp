// `regpipe flirt`: FLIRT's command lines of examples/flirt run unchanged and recover the
// phantom's truth; the matrix is the one `regpipe run` gives for the same pipeline; bad
// FLIRT input is refused naming the flag, with nothing written.
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include "support/raw_nifti.hpp"
#include "support/test_support.hpp"

#include <cstdlib>
#include <fstream>

namespace fs = std::filesystem;
using regpipe::test::run_command;

namespace {

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }
std::string cli() { return quoted(regpipe::test::regpipe_cli()); }

// Mean displacement (mm) over the reference's head between an FSL matrix and the truth.
double fsl_error_mm(const fs::path& dir, const std::string& mat) {
  const regpipe::Image reference = regpipe::read_image(dir / "reference.nii.gz");
  const regpipe::Image moving = regpipe::read_image(dir / "moving.nii.gz");
  const Eigen::Matrix4d found =
      regpipe::read_transform(dir / mat, regpipe::TransformFormat::Fsl, {&moving, &reference});
  const Eigen::Matrix4d truth = regpipe::from_world_ras_forward(regpipe::read_matrix_file(dir / "truth_world.txt"));
  return regpipe::mean_displacement_mm(found, truth, reference, regpipe::foreground_threshold(reference));
}

TEST(FlirtCli, TheExampleCommandLinesRecoverThePhantomsTruth) {
  regpipe::test::TempDir dir;
  std::string out;
  ASSERT_EQ(run_command("REGPIPE=" + cli() + " bash " + quoted(regpipe::test::source_dir() / "examples" / "flirt" /
                                                                "flirt_examples.sh") +
                            " " + quoted(dir.path()),
                        &out),
            0)
      << out;
  for (const char* mat : {"moving_to_reference.mat", "rigid.mat"}) {  // 3 mm voxels
    const double error = fsl_error_mm(dir.path(), mat);
    std::printf("%s: mean displacement error %.4f mm\n", mat, error);
    EXPECT_LT(error, 0.5) << mat;
  }
  // -out and -applyxfm write on the reference grid with its header.
  const regpipe::Image reference = regpipe::read_image(dir / "reference.nii.gz");
  for (const char* image : {"moving_in_reference.nii.gz", "applied.nii.gz"}) {
    const regpipe::Image written = regpipe::read_image(dir / image);
    EXPECT_EQ(written.dims, reference.dims) << image;
    EXPECT_LT((written.voxel_to_world - reference.voxel_to_world).cwiseAbs().maxCoeff(), 1e-5) << image;
  }
  EXPECT_EQ(regpipe::test::RawNifti::read_header(dir / "applied.nii.gz").sform_code,
            regpipe::test::RawNifti::read_header(dir / "reference.nii.gz").sform_code);
}

TEST(FlirtCli, GivesTheMatrixRegpipeRunGivesForTheSamePipeline) {
  regpipe::test::TempDir dir;
  std::string out;
  ASSERT_EQ(run_command(cli() + " phantom " + quoted(dir / "p") + " --size 40 --voxel-mm 4", &out), 0) << out;
  ASSERT_EQ(run_command("cd " + quoted(dir / "p") + " && " + cli() +
                            " flirt -in moving -ref reference.nii.gz -dof 6 -bins 128 -minsampling 4 -omat flirt.mat",
                        &out),
            0)
      << out;
  // What the flags mean, as a pipeline (docs/flirt.md).
  regpipe::write_text_atomically(dir / "p" / "flirt.yaml", R"(inputs:
  reference: reference.nii.gz
  moving: moving.nii.gz
registration:
  dof: 6
  levels_mm: [8, 4]
  initialisation: scaled_voxels
  bins_per_level: true
  cost: {plugin: [cuda.cr, cpu.cr], params: {bins: 128}}
  optimizer: {plugin: optim.flirt}
outputs:
  dir: run
  registered_image: false
)");
  ASSERT_EQ(run_command(cli() + " run -q " + quoted(dir / "p" / "flirt.yaml"), &out), 0) << out;
  const Eigen::Matrix4d a = regpipe::read_matrix_file(dir / "p" / "flirt.mat");
  const Eigen::Matrix4d b = regpipe::read_matrix_file(dir / "p" / "run" / "transform.mat");
  EXPECT_LT((a - b).cwiseAbs().maxCoeff(), 1e-9) << a << "\n\n" << b;
}

TEST(FlirtCli, BadInputIsRefusedNamingTheFlagAndWritesNothing) {
  regpipe::test::TempDir dir;
  std::string out;
  ASSERT_EQ(run_command(cli() + " phantom " + quoted(dir / "p") + " --size 24 --voxel-mm 6", &out), 0) << out;
  std::ofstream(dir / "p" / "twice.nii") << "x";
  std::ofstream(dir / "p" / "twice.nii.gz") << "x";
  const std::string io = " -in moving -ref reference";
  struct Case {
    std::string args, expected, env;
  };
  const Case cases[] = {
      {io + " -omat a.mat -foo 3", "unknown FLIRT flag -foo", ""},
      {io + " -omat a.mat -serchrx -30 30", "did you mean '-searchrx'", ""},
      {io + " -omat a.mat -2D", "-2D", ""},
      {io + " -omat a.mat -cost bbr", "bbr", ""},
      {io + " -omat a.mat -cost corr", "not a FLIRT cost", ""},
      {io + " -omat a.mat -dof 3", "-dof 3", ""},
      {io + " -omat a.mat -dof", "-dof needs 1 value", ""},
      {io + " -omat a.mat -searchrx 30", "-searchrx needs 2 values", ""},
      {io + " -omat a.mat -searchrx 30 -30", "min above max", ""},
      {io + " -omat a.mat -bins many", "-bins many: not a number", ""},
      {io + " -omat a.mat -interp cubic", "-interp cubic", ""},
      {io + " -omat a.mat -datatype half", "-datatype half", ""},
      {io + " -omat a.mat -schedule s.sch", "-schedule", ""},
      {io + " -out a -applyxfm", "give -init", ""},
      {io + " -applyxfm -init none.mat -out a", "-init none.mat", ""},
      {io, "nothing to write", ""},
      {" -ref reference -omat a.mat", "-in is required", ""},
      {" -in missing -ref reference -omat a.mat", "-in missing", ""},
      {" -in twice -ref reference -omat a.mat", "more than one image", ""},
      {io + " -out a", "FSLOUTPUTTYPE=NIFTI_PAIR_GZ", "FSLOUTPUTTYPE=NIFTI_PAIR_GZ "},
      {io + " -omat a.mat -in moving", "given twice", ""},
      {io + " -omat a.mat stray", "'stray' is not a FLIRT flag", ""},
  };
  for (const Case& c : cases) {
    const int status = run_command("cd " + quoted(dir / "p") + " && " + c.env + cli() + " flirt" + c.args, &out);
    EXPECT_EQ(status, 2) << c.args << "\n" << out;
    EXPECT_NE(out.find(c.expected), std::string::npos) << c.args << "\n" << out;
    for (const char* written : {"a.mat", "a.nii.gz", "a.hdr"}) EXPECT_FALSE(fs::exists(dir / "p" / written)) << c.args;
  }
}

}  // namespace
