// A chain of transform files on the command line (`regpipe transform`, `regpipe apply`), in the
// order an image goes through them: input 1 registers space 0 onto space 1, input 2 space 1
// onto space 2, ... (docs/coordinates.md). Its matrix maps the last space's world to space 0's.
#pragma once

#include "transform_argument.hpp"

#include <regpipe/host/image.hpp>
#include <regpipe/host/resample_through_chain.hpp>
#include <regpipe/host/transform_file.hpp>

#include <Eigen/Core>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace regpipe::cli {

// The image of each space of the chain (0 .. n), which FSL files need; read when one does.
class ChainImages {
 public:
  explicit ChainImages(size_t transforms) : spaces_(transforms + 1) {}

  // Names the image of `space`; another image already named for it is refused (`named_by`:
  // "--src", "ref= of 'a.mat'", for the message).
  void name(size_t space, const std::filesystem::path& path, const std::string& named_by);
  // Names each input's src= (its space) and ref= (the next).
  void name_from(const std::vector<TransformArgument>& inputs);
  // Names the image of `space` unless one is named already.
  void name_default(size_t space, const std::filesystem::path& path, const std::string& named_by);
  // An image already read (only its grid is used): not read again when an FSL file needs it.
  void provide(const std::filesystem::path& path, const Image& image);

  // FLIRT's -in (the image of space `from`) and -ref (space `to`) for FSL file `file`; `how`
  // tells the user how to name them when one is missing.
  FslImages fsl_images(size_t from, size_t to, const std::filesystem::path& file,
                       const std::string& how);

 private:
  struct NamedImage {
    std::filesystem::path path;
    std::string named_by;
  };
  const Image& image(const std::filesystem::path& path);

  std::vector<std::optional<NamedImage>> spaces_;
  std::map<std::filesystem::path, Image> images_;
};

// Whether `input` names a displacement field (ITK/ANTs *Warp.nii.gz): its warp: prefix, or,
// without a FORMAT: prefix, a file that holds a NIfTI-1 header (by content, whatever
// --in-format says: no affine format is NIfTI; read_displacement_field then says what a NIfTI
// file that is no field holds).
bool names_displacement_field(const TransformArgument& input);

// The chain's steps, in its order: each affine read as its ref_to_mov (its format its FORMAT:
// prefix, else `in_format`, else detected; `how` as fsl_images'), each field read whole.
std::vector<ChainStep> read_chain(const std::vector<TransformArgument>& inputs,
                                  const std::optional<TransformFormat>& in_format, ChainImages& images,
                                  const std::string& how);

// The chain's ref_to_mov, last space's world -> space 0's world: T_1 T_2 ... T_n. Each input's
// format is its FORMAT: prefix, else `in_format`, else detected; `how` as fsl_images'. A
// displacement field in the chain is a UserError (a chain of affines is one matrix; one with
// a field is not).
Eigen::Matrix4d compose_chain(const std::vector<TransformArgument>& inputs,
                              const std::optional<TransformFormat>& in_format, ChainImages& images,
                              const std::string& how);

// The format an --in-format / --out-format option names; nothing for "".
std::optional<TransformFormat> format_option(const std::string& name);

// "the transform of 'a.mat', 'b.tfm'", for messages about the chain's result.
std::string chain_name(const std::vector<TransformArgument>& inputs);

}  // namespace regpipe::cli
