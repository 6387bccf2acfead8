// One transform file named on `regpipe transform`'s command line:
//   [FORMAT:]PATH[:src=IMAGE][:ref=IMAGE]
// FORMAT is fsl, itk, ants or world; src and ref are the images an FSL matrix relates
// (FLIRT's -in and -ref). FORMAT warp names a displacement field (ITK/ANTs *Warp.nii.gz),
// which `regpipe apply` also recognises by its content. A path may hold ':' elsewhere; "fsl:" etc. only count at the start
// and ":src=" / ":ref=" only after the path.
#pragma once

#include <regpipe/host/transform_file.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace regpipe::cli {

struct TransformArgument {
  std::filesystem::path path;
  std::optional<TransformFormat> format;
  bool warp = false;  // "warp:": a displacement field
  std::optional<std::filesystem::path> src, ref;
};

// UserError on an unknown key (":foo=") or an empty path or image.
TransformArgument parse_transform_argument(const std::string& text);

}  // namespace regpipe::cli
