#include <regpipe/host/error.hpp>
#include <regpipe/host/resample_image.hpp>

#include "driver/create_component.hpp"

namespace regpipe {

const std::vector<std::string>& interpolation_names() {
  static const std::vector<std::string> names{"nearest", "trilinear", "sinc", "bspline", "label"};
  return names;
}

Interpolation interpolation_from_name(const std::string& name) {
  const auto& names = interpolation_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return Interpolation(i);
  throw UserError("unknown interpolation '" + name +
                  "'; use nearest, trilinear, sinc, bspline or label");
}

int32_t interpolation_code(Interpolation interpolation) {
  switch (interpolation) {
    case Interpolation::nearest: return RP_INTERP_NEAREST;
    case Interpolation::trilinear: return RP_INTERP_TRILINEAR;
    case Interpolation::sinc: return RP_INTERP_SINC;
    case Interpolation::bspline: return RP_INTERP_BSPLINE;
    case Interpolation::label: break;
  }
  throw UserError("label interpolation is not a resampler's: it is done by resample_labels");
}

CreatedResampler create_resampler(const ComponentSpec& spec, const PluginHost& plugins,
                                  HostServices& services) {
  Created<ResamplerInstance> created =
      create_component<ResamplerInstance>(spec, RP_KIND_RESAMPLER, "resampler", plugins, services);
  return {std::move(created.instance), std::move(created.used)};
}

Image zero_image_on(const Image& grid, VoxelType type) {
  Image out;
  out.dims = grid.dims;
  out.voxel_to_world = grid.voxel_to_world;
  out.nifti = grid.nifti;
  out.file_type = type;
  out.data.assign(out.voxel_count(), 0.0f);
  return out;
}

Image resample_onto(ResamplerInstance& resampler, const Image& input, const Image& grid,
                    const Eigen::Matrix4d& ref_to_mov, int32_t interpolation) {
  Image out = zero_image_on(grid, input.file_type);
  const rp_image view = input.view();
  rp_resample_request req{};
  req.size = sizeof(req);
  req.input = &view;
  double matrix[16];
  for (int i = 0; i < 16; ++i) matrix[i] = ref_to_mov(i / 4, i % 4);
  req.matrix = matrix;
  for (int a = 0; a < 3; ++a) req.out_dims[a] = out.dims[a];
  for (int i = 0; i < 16; ++i) req.out_voxel_to_world[i] = out.voxel_to_world(i / 4, i % 4);
  req.out_data = out.data.data();
  req.interpolation = interpolation;
  resampler.resample(req);
  return out;
}

}  // namespace regpipe
