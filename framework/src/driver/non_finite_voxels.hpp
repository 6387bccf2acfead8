// inputs.non_finite: what becomes of NaN and infinite voxels in an image and its weighting
// image, which the costs' sums would otherwise turn into a NaN cost or, binned, a silently
// wrong one. (ITK's NIfTI reader already turns them into 0, as FSL's tools read them;
// MetaImage, NRRD and Analyze keep them, and so reach this.)
#pragma once

#include <regpipe/host/image.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace regpipe {

// "refuse": throws UserError naming the file, how many voxels are not finite and the first
// (x, y, z). "mask": those voxels become 0 in the image and weight 0 (a weight of ones is
// made when there is none), so that they take no part in the cost.
void apply_non_finite_policy(const std::string& policy, Image& image, const std::filesystem::path& image_path,
                             std::optional<Image>& weight, const std::filesystem::path& weight_path);

}  // namespace regpipe
