#include <regpipe_common/syn/syn_levels.hpp>

#include <regpipe_common/fields/gaussian_smoothing.hpp>
#include <regpipe_common/resample_request.hpp>

#include <regpipe/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace regpipe_common::syn {

FieldGeometry geometry_of(const rp_image& image) {
  if (!image.data || image.dims[0] < 1 || image.dims[1] < 1 || image.dims[2] < 1)
    throw rp::Error(RP_INVALID_ARGUMENT, "SyN: an input image has no voxels");
  FieldGeometry g{{int(image.dims[0]), int(image.dims[1]), int(image.dims[2])}, {}};
  std::copy(image.voxel_to_world, image.voxel_to_world + 16, g.voxel_to_world);
  check_field_geometry(g);
  return g;
}

FieldGeometry shrink_geometry(const FieldGeometry& full, int factor) {
  if (factor < 1)
    throw rp::Error(RP_INVALID_ARGUMENT, "SyN shrink factor " + std::to_string(factor) + " is below 1");
  const int n[3] = {full.dims.nx, full.dims.ny, full.dims.nz};
  int m[3];
  double offset[3];  // the full grid's continuous index of the shrunk grid's voxel 0
  for (int a = 0; a < 3; ++a) {
    m[a] = std::max(1, n[a] / factor);
    offset[a] = 0.5 * (double(n[a] - 1) - double(m[a] - 1) * factor);
  }
  FieldGeometry out{{m[0], m[1], m[2]}, {}};
  const double* v = full.voxel_to_world;
  for (int r = 0; r < 3; ++r) {
    for (int a = 0; a < 3; ++a) out.voxel_to_world[4 * r + a] = v[4 * r + a] * factor;
    out.voxel_to_world[4 * r + 3] = v[4 * r + 3] + v[4 * r] * offset[0] + v[4 * r + 1] * offset[1] + v[4 * r + 2] * offset[2];
  }
  out.voxel_to_world[12] = out.voxel_to_world[13] = out.voxel_to_world[14] = 0.0;
  out.voxel_to_world[15] = 1.0;
  return out;
}

std::vector<float> smoothed_image(const rp_image& image, double sigma, bool in_mm, Execution execution) {
  if (!(sigma >= 0.0 && std::isfinite(sigma)))
    throw rp::Error(RP_INVALID_ARGUMENT, "SyN smoothing sigma " + std::to_string(sigma) + " must be at least 0");
  const FieldGeometry g = geometry_of(image);
  std::vector<float> out(image.data, image.data + voxel_count(g.dims));
  double sigma_voxels[3];
  for (int a = 0; a < 3; ++a) sigma_voxels[a] = in_mm ? sigma / axis_spacing(image.voxel_to_world, a) : sigma;
  smooth_image_gaussian(out, g.dims, sigma_voxels, execution);
  return out;
}

rp_image with_data(const rp_image& image, const std::vector<float>& data) {
  rp_image out = image;
  out.data = data.data();
  return out;
}

}  // namespace regpipe_common::syn
