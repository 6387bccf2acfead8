// Image file names the way FSL's tools resolve them: a name may come without its extension.
#pragma once

#include <filesystem>
#include <string>

namespace regpipe::flirt {

// An existing image named `name` (as given, or with .nii.gz, .nii or .hdr added). UserError
// naming `flag` when there is none, or when more than one file answers to the name (FSL
// refuses that too).
std::filesystem::path resolve_input_image(const std::string& name, const std::string& flag);

// The file an output named `name` is written to: as given when it ends in .nii.gz, .nii or
// .hdr; else with the extension $FSLOUTPUTTYPE names (NIFTI_GZ, the default: .nii.gz; NIFTI:
// .nii; NIFTI_PAIR: .hdr with its .img). UserError for a type regpipe cannot write.
std::filesystem::path output_image_path(const std::string& name, const std::string& flag);

}  // namespace regpipe::flirt
