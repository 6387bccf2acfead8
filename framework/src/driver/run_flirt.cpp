// `regpipe flirt`'s run: the pipeline its flags made, and FLIRT's two outputs at the paths given.
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/flirt.hpp>
#include <regpipe/host/transform_file.hpp>

#include "driver/run_outputs.hpp"

#include <cmath>
#include <cstdio>

namespace regpipe {
namespace {

// -applyisoxfm: the reference's field of view on a grid of `mm` voxels, its axes kept and the
// outer corner of its first voxel in place.
Image isotropic_grid(const Image& reference, double mm) {
  Image grid;
  grid.nifti = reference.nifti;
  const Eigen::Vector3d spacing = reference.spacing();
  const Eigen::Matrix3d direction =
      reference.voxel_to_world.topLeftCorner<3, 3>() * spacing.cwiseInverse().asDiagonal();
  for (int a = 0; a < 3; ++a)
    grid.dims[a] = uint32_t(std::max(1.0, std::round(double(reference.dims[a]) * spacing[a] / mm)));
  grid.voxel_to_world.topLeftCorner<3, 3>() = direction * mm;
  grid.voxel_to_world.topRightCorner<3, 1>() =
      reference.voxel_to_world.topRightCorner<3, 1>() + direction * (0.5 * (Eigen::Vector3d::Constant(mm) - spacing));
  return grid;
}

}  // namespace

void run_flirt(const FlirtCommand& c, const PluginHost& plugins, HostServices& services) {
  for (const auto& note : c.notes) services.log(RP_LOG_WARNING, "regpipe flirt: " + note);
  const Pipeline p = pipeline_from_keys(c.keys, "regpipe flirt", plugins);
  RegistrationImages images = load_images(p.inputs);
  const FslImages fsl{&images.moving, &images.reference};

  Eigen::Matrix4d ref_to_mov;
  if (c.apply_only) {
    ref_to_mov = read_transform(*c.init, TransformFormat::Fsl, fsl);
  } else {
    const RegistrationResult result = register_images(p, images, plugins, services);
    ref_to_mov = result.ref_to_mov;
    if (c.verbose)
      std::printf("regpipe flirt: final cost %.6f (%s), %.3f s\n", result.final_cost,
                  result.components.front().id.c_str(), result.seconds_search);
  }
  // The matrix first: a failed image write then still leaves FLIRT's main result.
  if (c.out_matrix) write_transform(*c.out_matrix, TransformFormat::Fsl, ref_to_mov, fsl);
  if (c.out_image) {
    if (c.iso_mm) images.reference = isotropic_grid(images.reference, *c.iso_mm);
    const std::optional<Image> registered = resample_registered(p, images, ref_to_mov, plugins, services);
    write_image(*registered, *c.out_image, registered_image_type(p, images.moving));
  }
}

}  // namespace regpipe
