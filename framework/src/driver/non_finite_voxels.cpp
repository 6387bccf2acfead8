#include "driver/non_finite_voxels.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe_common/parallel_slabs.hpp>

#include <cmath>
#include <vector>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

struct NonFinite {
  size_t count = 0;
  size_t first = 0;
};

// Counted slab by slab on every core, the slabs' counts then in order (the first is the lowest
// slab's).
NonFinite non_finite_voxels(const Image& image) {
  const size_t n = image.data.size();
  const size_t slabs = 1 + n / (1 << 16);
  std::vector<NonFinite> in_slab(slabs);
  regpipe_common::parallel_slabs(slabs, [&](size_t s) {
    NonFinite& found = in_slab[s];
    for (size_t i = regpipe_common::slab_begin(n, slabs, s), end = regpipe_common::slab_begin(n, slabs, s + 1); i < end; ++i)
      if (!std::isfinite(image.data[i]) && found.count++ == 0) found.first = i;
  });
  NonFinite found;
  for (const NonFinite& slab : in_slab) {
    if (found.count == 0) found.first = slab.first;
    found.count += slab.count;
  }
  return found;
}

[[noreturn]] void refuse(const Image& image, const fs::path& path, const NonFinite& found) {
  const size_t nx = image.dims[0], ny = image.dims[1];
  const size_t x = found.first % nx, y = found.first / nx % ny, z = found.first / (nx * ny);
  throw UserError("cannot read image '" + path.string() + "': " + std::to_string(found.count) + " of its " +
                  std::to_string(image.data.size()) + " voxels are not finite (NaN or infinite), the first at voxel (" +
                  std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) +
                  "); set inputs.non_finite: mask to leave them out of the registration");
}

}  // namespace

void apply_non_finite_policy(const std::string& policy, Image& image, const fs::path& image_path,
                             std::optional<Image>& weight, const fs::path& weight_path) {
  const NonFinite in_image = non_finite_voxels(image);
  const NonFinite in_weight = weight ? non_finite_voxels(*weight) : NonFinite{};
  if (in_image.count == 0 && in_weight.count == 0) return;
  if (policy != "mask") {
    if (in_image.count > 0) refuse(image, image_path, in_image);
    refuse(*weight, weight_path, in_weight);
  }
  if (!weight) {
    weight = image;
    std::fill(weight->data.begin(), weight->data.end(), 1.0f);
  }
  for (size_t i = 0; i < image.data.size(); ++i)
    if (!std::isfinite(image.data[i]) || !std::isfinite(weight->data[i])) {
      image.data[i] = 0.0f;
      weight->data[i] = 0.0f;
    }
}

}  // namespace regpipe
