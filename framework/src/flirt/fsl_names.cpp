#include "flirt/fsl_names.hpp"

#include <regpipe/host/error.hpp>

#include <cstdlib>
#include <vector>

namespace fs = std::filesystem;

namespace regpipe::flirt {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool has_image_extension(const std::string& name) {
  for (const char* e : {".nii.gz", ".nii", ".hdr", ".img", ".hdr.gz", ".img.gz"})
    if (ends_with(name, e)) return true;
  return false;
}

}  // namespace

fs::path resolve_input_image(const std::string& name, const std::string& flag) {
  std::error_code ec;
  if (has_image_extension(name) || fs::is_regular_file(name, ec)) {
    if (!fs::exists(name, ec)) throw UserError(flag + " " + name + ": no such file");
    return name;
  }
  std::vector<std::string> found;
  for (const char* e : {".nii.gz", ".nii", ".hdr"})
    if (fs::is_regular_file(name + e, ec)) found.push_back(name + e);
  if (found.empty()) throw UserError(flag + " " + name + ": no image " + name + "(.nii.gz, .nii or .hdr)");
  if (found.size() > 1)
    throw UserError(flag + " " + name + ": more than one image has that name (" + found[0] + ", " + found[1] +
                    "); name the file with its extension");
  return found.front();
}

fs::path output_image_path(const std::string& name, const std::string& flag) {
  if (ends_with(name, ".nii.gz") || ends_with(name, ".nii") || ends_with(name, ".hdr")) return name;
  const char* set = std::getenv("FSLOUTPUTTYPE");
  const std::string type = set != nullptr && *set != '\0' ? set : "NIFTI_GZ";
  if (type == "NIFTI_GZ") return name + ".nii.gz";
  if (type == "NIFTI") return name + ".nii";
  if (type == "NIFTI_PAIR") return name + ".hdr";
  throw UserError(flag + " " + name + ": FSLOUTPUTTYPE=" + type +
                  " is not written by regpipe; use NIFTI_GZ, NIFTI or NIFTI_PAIR, or name the file with "
                  "its extension (.nii.gz, .nii, .hdr)");
}

}  // namespace regpipe::flirt
