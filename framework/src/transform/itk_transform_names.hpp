// ITK 5.2's transform readers (text .tfm/.txt and MATLAB .mat) create whatever class a file
// names through ITK's object factory, and when that class is not a transform (an image IO's
// name, say "itkImageIOBase") they throw without releasing the object: a leak per read, which
// the transform fuzzer found. Names are checked here first: only a transform's, which ITK
// writes as class, precision and dimensions ("AffineTransform_double_3_3"), goes to ITK.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace regpipe::transform_detail {

// Class_double_N_M or Class_float_N_M.
bool is_itk_transform_type_name(std::string_view name);

// `name` for a message: at most 60 bytes, those that are not printable ASCII as '?'.
std::string printable_name(std::string_view name);

// The first "Transform:" line of ITK's text file `path` whose name is not a transform's
// ("line 3 names 'itkImageIOBase' ..."), or nullopt.
std::optional<std::string> itk_text_transform_names_problem(const std::filesystem::path& path);

}  // namespace regpipe::transform_detail
