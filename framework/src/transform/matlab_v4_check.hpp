// ANTs' affine files (0GenericAffine.mat) are MATLAB v4 matrices, read by ITK through vnl, which
// allocates whatever name length and matrix size a record header claims (a 20-byte file can
// ask for exabytes). The records are walked here first, before vnl reads them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace regpipe::transform_detail {

// What is wrong with the MATLAB v4 records of `path` ("matrix 1 promises 1073741824 x 2
// doubles, more than the 40 bytes left in the file"), or nullopt when every record fits.
std::optional<std::string> matlab_v4_problem(const std::filesystem::path& path);

}  // namespace regpipe::transform_detail
