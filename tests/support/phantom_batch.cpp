#include "support/phantom_batch.hpp"

#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace regpipe::test {

bool make_phantom_batch(const fs::path& dir, std::span<const PhantomCase> cases, const std::string& phantom_options) {
  fs::create_directories(dir / "scans");
  fs::create_directories(dir / "truths");
  for (const PhantomCase& c : cases) {
    const fs::path made = dir / "made" / c.name;
    std::string out;
    if (run_command(regpipe_cli().string() + " phantom '" + made.string() + "' " + phantom_options +
                        " --angle-deg " + c.angle_deg + " --shift-mm " + c.shift_mm,
                    &out) != 0) {
      ADD_FAILURE() << "regpipe phantom failed: " << out;
      return false;
    }
    fs::copy_file(made / "moving.nii.gz", dir / "scans" / (std::string(c.name) + ".nii.gz"));
    fs::copy_file(made / "truth_world.txt", dir / "truths" / (std::string(c.name) + ".txt"));
    if (!fs::exists(dir / "reference.nii.gz")) fs::copy_file(made / "reference.nii.gz", dir / "reference.nii.gz");
  }
  return true;
}

}  // namespace regpipe::test
